// The hall's scoreboard and a table's page: filled from /api, then kept live from the hub's WebSocket.
"use strict";
const tablePage = location.pathname.startsWith("/tables/");
const tableName = tablePage ? decodeURIComponent(location.pathname.split("/")[2]) : null;
document.getElementById(tablePage ? "table-view" : "hall-view").hidden = false;
document.getElementById("back").hidden = !tablePage;

function cell(row, text) { const td = document.createElement("td"); td.textContent = text; row.appendChild(td); return td; }
function pair(v) { return v ? `${v.A} – ${v.B}` : "—"; }
function callsText(ruling) {
  return ruling.calls.map(c => `${c.code} (${c.clause})`).join(", ") || "—";
}

function drawHall(hall) {
  const body = document.querySelector("#tables tbody");
  body.replaceChildren();
  for (const t of hall.tables) {
    const s = t.standing || {};
    const row = document.createElement("tr");
    row.dataset.table = t.table;
    const name = cell(row, "");
    const link = document.createElement("a");
    link.href = `/tables/${encodeURIComponent(t.table)}`;
    link.textContent = t.table;
    name.appendChild(link);
    cell(row, s.game || t.info.game || "");
    cell(row, s.players ? `${s.players.A} v ${s.players.B}` : "");
    cell(row, s.score ? pair(s.score.games_won) : "—");
    cell(row, pair(s.points));
    cell(row, s.shots ?? 0);
    cell(row, s.last ? `game ${s.last.game_no} shot ${s.last.shot_no}: ${callsText(s.last.ruling)}` : "—").className = "last";
    body.appendChild(row);
  }
  const ranking = document.querySelector("#ranking tbody");
  ranking.replaceChildren();
  for (const r of hall.ranking) {
    const row = document.createElement("tr");
    for (const v of [r.player, r.game, r.matches, r.games_won, r.points]) cell(row, v);
    ranking.appendChild(row);
  }
}

function addFeed(ev) {
  const feed = document.getElementById("feed");
  const li = document.createElement("li");
  li.dataset.table = ev.table;
  li.dataset.shot = `${ev.game_no}.${ev.shot_no}`;
  if (ev.ruling.review) li.className = "review";
  li.textContent = `${ev.table}: game ${ev.game_no} shot ${ev.shot_no}, ${ev.ruling.player}: ${callsText(ev.ruling)}`;
  feed.prepend(li);
  while (feed.children.length > 200) feed.lastChild.remove();
}

function addCall(shot) {
  const row = document.createElement("tr");
  row.dataset.shot = `${shot.game_no}.${shot.shot_no}`;
  if (shot.ruling.review) row.className = "review";
  for (const v of [shot.game_no, shot.shot_no, shot.ruling.player, callsText(shot.ruling), shot.ruling.review ? "yes" : ""]) cell(row, v);
  document.querySelector("#calls-table tbody").appendChild(row);
}

async function loadTable() {
  const doc = await (await fetch(`/api/tables/${encodeURIComponent(tableName)}/report`)).json();
  document.getElementById("title").textContent = `table ${tableName}`;
  document.getElementById("report").href = `/tables/${encodeURIComponent(tableName)}/report`;
  document.getElementById("report-json").href = `/api/tables/${encodeURIComponent(tableName)}/report`;
  if (doc.info.overlay) { const a = document.getElementById("spectators"); a.href = doc.info.overlay; a.hidden = false; }
  const s = doc.standing;
  document.getElementById("standing").textContent = s && s.score ?
    `${s.game}: ${s.players.A} v ${s.players.B}, games won ${pair(s.score.games_won)}, points ${pair(s.points)} (${s.points_rule})` : "";
  document.querySelector("#calls-table tbody").replaceChildren();
  for (const shot of doc.shots) addCall(shot);
}

function connect() {
  const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`);
  const state = document.getElementById("connection");
  ws.onopen = () => { state.textContent = "live"; };
  ws.onclose = () => { state.textContent = "reconnecting…"; setTimeout(connect, 1000); };
  ws.onmessage = async (m) => {
    const ev = JSON.parse(m.data);
    if (tablePage) {
      if (ev.type === "hello" || (ev.table === tableName && ev.type === "standing")) await loadTable();
      return;
    }
    if (ev.type === "call") addFeed(ev);
    if (ev.type === "hello") drawHall(ev);
    else if (ev.type === "standing" || ev.type === "tables") drawHall(await (await fetch("/api/hall")).json());
  };
}
connect();
