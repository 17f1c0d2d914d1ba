// The referee's console: the queue of shots to decide (flagged calls, refused shots) with their evidence,
// and the decisions: confirm, decide the doubtful call, undo. Keyboard: j / k (or the arrows) move through
// the queue, c confirms, 1-3 pick a decision, u undoes the last shot, r reloads the queue. Everything needs
// the token; every action is journaled by the judge and shown to spectators as a referee decision.
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  let items = [];
  let selected = 0;

  const token = () => $("token").value.trim();
  const auth = () => (token() ? { Authorization: `Bearer ${token()}` } : {});

  function say(ok, text) {
    const out = $("referee-result");
    out.className = ok ? "ok" : "error";
    out.textContent = text;
  }

  async function load() {
    if (!token()) { items = []; render(); return; }
    try {
      const res = await fetch("/api/referee/queue", { headers: auth() });
      const data = await res.json().catch(() => ({}));
      if (!res.ok) { say(false, fill(_("Refused ({status}): {detail}"), { status: res.status, detail: data.detail || res.statusText })); return; }
      items = data.queue || [];
      selected = Math.min(selected, Math.max(items.length - 1, 0));
      render();
    } catch (err) { say(false, fill(_("Error: {error}"), { error: err })); }
  }

  async function act(path, body) {
    try {
      const res = await fetch(`/api/referee/${path}`, { method: "POST", headers: { "Content-Type": "application/json", ...auth() },
                                                        body: JSON.stringify(body || {}) });
      const data = await res.json().catch(() => ({}));
      if (!res.ok) say(false, fill(_("Refused ({status}): {detail}"), { status: res.status, detail: data.detail || res.statusText }));
      else say(true, data.text || _("done"));
    } catch (err) { say(false, fill(_("Error: {error}"), { error: err })); }
    load();
  }

  function instant(k) {
    const fig = document.createElement("figure");
    if (k.png) {
      const img = document.createElement("img");
      img.src = `data:image/png;base64,${k.png}`;
      img.alt = k.name;
      fig.appendChild(img);
    }
    const cap = document.createElement("figcaption");
    const when = k.timed ? fill(_("{t} s ± {err} ms"), { t: k.t_s.toFixed(4), err: (k.t_err_s * 1000).toFixed(2) })
                         : fill(_("{t} s (not timed)"), { t: k.t_s.toFixed(3) });
    const missing = k.png ? "" : " · " + fill(_("no picture: {why}"), { why: k.no_picture });
    cap.textContent = `${k.label} · ${k.pieces.join(", ")} · ${when}` + missing;
    fig.appendChild(cap);
    return fig;
  }

  function button(text, key, fn) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = `${text} [${key}]`;
    b.dataset.key = key;
    b.onclick = fn;
    return b;
  }

  function actions(item) {
    const out = [];
    if (item.kind === "call") {
      out.push(button(_("Call stands"), "c", () => act("confirm", { shot_no: item.shot_no })));
      item.decisions.forEach((d, i) => out.push(button(d.label, String(i + 1), () => act("decide", { shot_no: item.shot_no, code: d.code, value: d.value }))));
      if (item.last) out.push(button(_("Undo shot"), "u", () => act("undo")));
    } else {
      out.push(button(_("State stands"), "c", () => act("settle", { review: item.review })));
    }
    return out;
  }

  function render() {
    const list = $("queue-list");
    list.textContent = "";
    $("queue").hidden = items.length === 0;
    $("queue-count").textContent = String(items.length);
    items.forEach((item, i) => {
      const li = document.createElement("li");
      li.className = i === selected ? "selected" : "";
      li.dataset.shot = item.shot_no === null ? `review-${item.review}` : String(item.shot_no);
      const head = document.createElement("div");
      head.className = "q-head";
      head.textContent = item.kind === "call"
        ? fill(_("Game {game} · shot {shot} · player {player}"), { game: item.game_no, shot: item.shot_no, player: item.player })
        : fill(_("Game {game} · shot not judged (review {review})"), { game: item.game_no, review: item.review });
      li.appendChild(head);
      const calls = document.createElement("ul");
      for (const c of item.calls) {
        const ci = document.createElement("li");
        if (c.review) ci.className = "review";
        ci.textContent = `${c.text || c.code} (§ ${c.clause})`;
        calls.appendChild(ci);
      }
      for (const r of item.reasons.filter((r) => !item.calls.some((c) => c.review && r.startsWith(c.text || c.code)))) {
        const ri = document.createElement("li");
        ri.className = "review";
        ri.textContent = r;
        calls.appendChild(ri);
      }
      li.appendChild(calls);
      const ev = document.createElement("div");
      ev.className = "q-evidence";
      item.instants.forEach((k) => ev.appendChild(instant(k)));
      li.appendChild(ev);
      const row = document.createElement("div");
      row.className = "buttons";
      actions(item).forEach((b) => row.appendChild(b));
      li.appendChild(row);
      li.onclick = () => { selected = i; mark(); };
      list.appendChild(li);
    });
  }

  function mark() {
    [...$("queue-list").children].forEach((li, i) => { li.className = i === selected ? "selected" : ""; });
  }

  document.addEventListener("keydown", (e) => {
    const tag = (e.target && e.target.tagName) || "";
    if (tag === "INPUT" || tag === "TEXTAREA" || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "r") { load(); return; }
    if (!items.length) return;
    if (e.key === "j" || e.key === "ArrowDown") { selected = Math.min(selected + 1, items.length - 1); mark(); e.preventDefault(); return; }
    if (e.key === "k" || e.key === "ArrowUp") { selected = Math.max(selected - 1, 0); mark(); e.preventDefault(); return; }
    const li = $("queue-list").children[selected];
    const b = li && li.querySelector(`button[data-key="${e.key}"]`);
    if (b) { b.click(); e.preventDefault(); }
  });
  $("token").addEventListener("change", load);
  $("queue-reload").onclick = load;
  // every call or referee decision may change the queue
  document.addEventListener("shotjudge:message", (e) => {
    if (["call", "referee", "unjudged"].includes(e.detail.type)) load();
  });
})();
