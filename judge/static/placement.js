// shotjudge placement assistant on the spectator page: after a ruling that puts pieces down (a penalty
// pawn, returns), each target spot is drawn on the board diagram, coloured by its status, with the
// status list under the diagram. The judge sends {"type": "placement", ...} over the page's WebSocket
// (app.js passes every message on as a "shotjudge:message" event); every sentence shown comes from the
// judge (judge/placement.py), so this file has no text of its own to translate.
"use strict";
(() => {
  const SVG = "http://www.w3.org/2000/svg";
  const style = document.createElement("link");
  style.rel = "stylesheet";
  style.href = "/static/placement.css";
  document.head.appendChild(style);

  const diagram = document.getElementById("board");
  const panel = document.createElement("div");
  panel.id = "placement";
  panel.hidden = true;
  panel.setAttribute("role", "status");
  panel.setAttribute("aria-live", "polite");
  const head = document.createElement("div");
  head.id = "placement-head";
  const list = document.createElement("ul");
  list.id = "placement-list";
  panel.append(head, list);
  diagram.after(panel);

  let current = null; // the last placement message, while it is active

  function svg(name, attrs, parent) {
    const node = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    parent.appendChild(node);
    return node;
  }

  // the spots, on top of the diagram app.js draws (it redraws from scratch on every state: see the observer)
  function drawSpots() {
    const old = diagram.querySelector("#placement-spots");
    if (old) old.remove();
    if (!current) return;
    const width = diagram.viewBox.baseVal.width || 1000;
    const g = svg("g", { id: "placement-spots" }, diagram);
    for (const p of current.pieces || []) {
      const [x, y] = p.at_mm;
      const spot = svg("g", { "data-piece": p.piece, class: `spot ${p.state}` }, g);
      // the piece's own size, and a halo a diagram of a whole board can show
      svg("circle", { cx: x, cy: -y, r: p.radius_mm, "stroke-width": width / 400 }, spot);
      svg("circle", { cx: x, cy: -y, r: Math.max(2 * p.radius_mm, width / 40), "stroke-width": width / 250, class: "halo" }, spot);
      const label = svg("text", { x: x + Math.max(2 * p.radius_mm, width / 40) * 1.1, y: -y, "font-size": width / 30 }, spot);
      label.textContent = p.off_mm === null ? p.piece : `${p.piece} ${p.off_mm.toFixed(1)}`;
    }
  }
  new MutationObserver(() => {
    if (current && !diagram.querySelector("#placement-spots")) drawSpots();
  }).observe(diagram, { childList: true });

  function show(msg) {
    current = msg && msg.active ? msg : null;
    panel.hidden = current === null;
    list.textContent = "";
    if (current) {
      panel.className = current.done ? "done" : "";
      head.textContent = current.text;
      for (const p of current.pieces || []) {
        const li = document.createElement("li");
        li.className = p.state;
        li.dataset.piece = p.piece;
        const text = document.createElement("span");
        text.textContent = `${p.text} `;
        const why = document.createElement("span");
        why.className = "why";
        why.textContent = p.why_text;
        li.append(text, why);
        list.appendChild(li);
      }
    }
    drawSpots();
  }

  let heard = false; // a placement message came over the socket (newer than what /api/state said)
  document.addEventListener("shotjudge:message", (e) => {
    const msg = e.detail;
    if (msg.type === "placement" || (msg.type === "hello" && msg.placement)) {
      heard = true;
      show(msg.type === "hello" ? msg.placement : msg);
    }
  });
  // the socket's hello may have come before this script was loaded: ask for the status as it stands
  fetch("/api/state").then((r) => r.json()).then((m) => { if (!heard && m.placement) show(m.placement); }).catch(() => {});
})();
