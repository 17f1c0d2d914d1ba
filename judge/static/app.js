// shotjudge spectator page: state and calls arrive over the WebSocket; nothing is fetched from outside.
"use strict";
const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
if (params.get("transparent") === "1") {
  document.body.classList.add("transparent");
  document.getElementById("video").removeAttribute("src"); // OBS has the camera; do not pull the stream
}

let board = {};
let state = {};
const SVG = "http://www.w3.org/2000/svg";

function el(name, attrs, parent) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

function drawBoard() {
  const svg = $("board");
  svg.textContent = "";
  if (!board.extent_mm) return;
  const [x0, y0, x1, y1] = board.extent_mm;
  // board +y points away from player A, who sits at the bottom: flip y for the screen
  svg.setAttribute("viewBox", `${x0} ${-y1} ${x1 - x0} ${y1 - y0}`);
  el("rect", { x: x0, y: -y1, width: x1 - x0, height: y1 - y0, fill: "#c8a165", stroke: "#6b4f2a", "stroke-width": (x1 - x0) / 100 }, svg);
  const line = { fill: "none", stroke: "#3b2a14", "stroke-width": (x1 - x0) / 250 };
  for (const z of board.zones || []) {
    const [a, b, c, d] = z.rect;
    el("rect", { x: a, y: -d, width: c - a, height: d - b, ...line }, svg);
  }
  for (const c of board.circles || []) el("circle", { cx: c.x, cy: -c.y, r: c.r, ...line }, svg);
  for (const l of board.lines || []) el("line", { x1: l[0], y1: -l[1], x2: l[2], y2: -l[3], ...line }, svg);
  for (const h of board.holes || []) el("circle", { cx: h.x, cy: -h.y, r: h.r, fill: "#111" }, svg);
  const r = board.piece_r_mm || 15;
  for (const [piece, xy] of Object.entries(state.positions || {})) {
    const who = piece[0];
    const fill = who === "A" ? "#ff8c00" : who === "B" ? "#00aaff" : "#eeeeee";
    const g = el("g", { "data-piece": piece }, svg);
    el("circle", { cx: xy[0], cy: -xy[1], r: piece === "bat" ? (board.bat_r_mm || r) : r, fill, stroke: "#222", "stroke-width": r / 8 }, g);
    const t = el("text", { x: xy[0], y: -xy[1] + r / 3, "font-size": r, "text-anchor": "middle", fill: "#111" }, g);
    t.textContent = piece;
  }
}

function showState(s) {
  if (!s) return;
  state = s;
  $("game-name").textContent = s.game || "—";
  $("game-no").textContent = s.game_no ? `game ${s.game_no}` : "";
  const body = $("score").querySelector("tbody");
  body.textContent = "";
  for (const [who, score] of Object.entries(s.score || {})) {
    const tr = document.createElement("tr");
    tr.className = who;
    const parts = typeof score === "object" ? Object.entries(score).map(([k, v]) => `${k.replace("_", " ")} ${v}`).join(" · ") : String(score);
    tr.innerHTML = "<td></td><td></td>";
    tr.children[0].textContent = `Player ${who}`;
    tr.children[1].textContent = parts;
    body.appendChild(tr);
  }
  $("to-move").textContent = s.to_move ? `to play: ${s.to_move}` : "";
  showReviews(s.reviews || []);
  drawBoard();
}

// Shots the engine refused (vision and the game state disagreed): each waits for the referee, who lets
// the state stand or sets the state the game goes on from.
function showReviews(items) {
  const list = $("review-list");
  list.textContent = "";
  $("reviews").hidden = items.length === 0;
  for (const item of items) {
    const li = document.createElement("li");
    const text = document.createElement("span");
    text.textContent = `Shot not judged (review ${item.review}): ${item.error} `;
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = "State stands";
    button.onclick = () => referee("settle", { review: item.review });
    li.append(text, button);
    list.appendChild(li);
  }
}

function showCall(event) {
  if (!event || !event.ruling) return;
  const r = event.ruling;
  $("call-head").textContent = `Game ${event.game_no} · shot ${event.shot_no} · player ${r.player}` + (r.review ? " · REVIEW" : "");
  const list = $("calls");
  list.textContent = "";
  for (const call of r.calls || []) {
    const li = document.createElement("li");
    if (call.review) li.className = "review";
    li.dataset.code = call.code;
    const text = document.createElement("span");
    text.textContent = `${call.text || call.code} `;
    const clause = document.createElement("span");
    clause.className = "clause";
    clause.textContent = `§ ${call.clause}`;
    li.append(text, clause);
    list.appendChild(li);
  }
}

function notice(text) {
  $("notice").textContent = text || "";
}

function handle(msg) {
  if (msg.type === "hello") {
    board = msg.board || {};
    // Cvrnkaná: the camera sees only the pit, so the referee enters the flicks played outside its view
    $("unseen").hidden = board.game !== "cvrnkana";
    showState(msg.state);
    if (msg.last) showCall(msg.last);
  } else if (msg.type === "call") {
    showState(msg.state);
    showCall(msg);
  } else if (msg.type === "referee") {
    showState(msg.state);
    if (msg.state && msg.state.last) showCall(msg.state.last);
    else { $("call-head").textContent = "waiting for the first shot…"; $("calls").textContent = ""; }
    notice(msg.text);
  } else if (msg.type === "gap" || msg.type === "message" || msg.type === "unjudged") {
    if (msg.state) showState(msg.state);
    notice(msg.text);
  }
}

let retry = 500;
function connect() {
  const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`);
  ws.onopen = () => { retry = 500; $("connection").textContent = "live"; $("connection").className = ""; };
  ws.onmessage = (e) => { const msg = JSON.parse(e.data); handle(msg); document.dispatchEvent(new CustomEvent("shotjudge:message", { detail: msg })); };
  ws.onclose = () => {
    $("connection").textContent = "reconnecting…";
    $("connection").className = "offline";
    setTimeout(connect, retry);
    retry = Math.min(retry * 2, 8000);
  };
}

async function referee(path, body) {
  const out = $("referee-result");
  const token = $("token").value.trim();
  const headers = { "Content-Type": "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  try {
    const res = await fetch(`/api/referee/${path}`, { method: "POST", headers, body: JSON.stringify(body || {}) });
    const data = await res.json().catch(() => ({}));
    if (!res.ok) {
      out.className = "error";
      out.textContent = `Refused (${res.status}): ${data.detail || res.statusText}`;
    } else {
      out.className = "ok";
      out.textContent = data.text || "done";
    }
  } catch (err) {
    out.className = "error";
    out.textContent = `Error: ${err}`;
  }
}

// The dispute report needs the token, so it is fetched here and opened as a page of its own (print it from there).
$("dispute-report").onclick = async () => {
  const out = $("referee-result");
  const token = $("token").value.trim();
  const view = window.open("", "_blank");
  try {
    const res = await fetch("/api/referee/report", { headers: token ? { Authorization: `Bearer ${token}` } : {} });
    if (!res.ok) {
      const data = await res.json().catch(() => ({}));
      if (view) view.close();
      out.className = "error";
      out.textContent = `Refused (${res.status}): ${data.detail || res.statusText}`;
      return;
    }
    const url = URL.createObjectURL(new Blob([await res.text()], { type: "text/html" }));
    if (view) view.location = url; else window.location = url;
  } catch (err) {
    if (view) view.close();
    out.className = "error";
    out.textContent = `Error: ${err}`;
  }
};

$("undo").onclick = () => referee("undo");
$("next-game").onclick = () => referee("next-game");
$("unseen-flick").onclick = () => {
  const piece = $("uf-piece").value.trim().toUpperCase();
  referee("unseen-flick", piece ? { piece } : {});
};
$("set-state").onclick = () => {
  let parsed;
  try { parsed = JSON.parse($("state-json").value); } catch (err) {
    $("referee-result").className = "error";
    $("referee-result").textContent = `The state is not JSON: ${err.message}`;
    return;
  }
  const open = (state && state.reviews) || [];
  referee("set-state", open.length ? { state: parsed, review: open[0].review } : { state: parsed });
};
$("override").onclick = () => referee("override", { shot_no: Number($("ov-shot").value), code: $("ov-code").value.trim() });
connect();
