// The Play page: one game (or two-game match) against an agent through /api/games.
"use strict";

const $ = (id) => document.getElementById(id);
let info = null;
let game = null;
let busy = false;
const board = new Board($("board"), (mv) => playMove(mv));

function showError(message) {
  const e = $("error");
  e.textContent = message || "";
  e.hidden = !message;
}

function setBusy(on) {
  busy = on;
  for (const id of ["new", "undo", "analyze", "next", "load"]) $(id).disabled = on;
  document.body.classList.toggle("busy", on);
}

function render(g) {
  game = g;
  board.show(g);
  const svg = $("board");
  svg.dataset.ply = String(g.ply);
  svg.dataset.turn = g.outcome ? "over" : g.thinking ? "agent" : g.your_turn ? "you" : "agent";
  const status = $("status");
  status.classList.remove("thinking");
  if (g.outcome) {
    status.textContent = "Game over.";
  } else if (g.your_turn) {
    status.textContent = `Your move (${g.human === "white" ? "White" : "Black"}). Click or drag a piece.`;
  } else {
    status.textContent = `${g.agent} is thinking…`;
    status.classList.add("thinking");
  }
  const result = $("result");
  result.hidden = !g.outcome;
  result.textContent = g.outcome ? g.outcome.text : "";
  renderMoves(g);
  renderAnalysis(g.analysis);
  renderMatch(g);
  $("undo").disabled = busy || !!g.match || g.ply === 0;
}

function renderMoves(g) {
  const list = $("moves");
  list.replaceChildren();
  // One line per White/Black pair, numbered as in the record.
  const startBlack = g.start.endsWith(" b");
  let items = [];
  let k = 0;
  if (startBlack && g.moves.length > 0) {
    items.push(["…", g.moves[0]]);
    k = 1;
  }
  for (; k < g.moves.length; k += 2) items.push([g.moves[k], g.moves[k + 1]]);
  for (const [w, b] of items) {
    list.append(el("li", {}, el("span", { class: "mv" }, w), " ", el("span", { class: "mv" }, b || "")));
  }
  list.scrollTop = list.scrollHeight;
}

function renderAnalysis(a) {
  const body = $("top-moves").querySelector("tbody");
  body.replaceChildren();
  const fill = $("value-fill");
  if (!a) {
    fill.style.width = "50%";
    $("value-text").textContent = "No analysis yet: the agent's reply brings one, or press Analyse.";
    return;
  }
  // The bar shows White's share: the value is for the side to move at the analysed ply.
  const white = a.side === "white" ? a.value : -a.value;
  fill.style.width = `${(50 + 50 * white).toFixed(1)}%`;
  $("value-text").textContent =
    `Value for ${a.side === "white" ? "White" : "Black"} (to move at ply ${a.ply}): ${a.value >= 0 ? "+" : ""}${fmt(a.value, 2)} ` +
    `(network alone ${a.net_value >= 0 ? "+" : ""}${fmt(a.net_value, 2)}); ${a.simulations} simulations in ${a.elapsed_ms} ms; best ${a.best}.`;
  a.top.forEach((m, i) => {
    body.append(el("tr", {}, el("td", {}, String(i + 1)), el("td", {}, m.move), el("td", {}, String(m.visits)),
      el("td", {}, fmt(m.prior, 3)), el("td", {}, m.q === null ? "–" : fmt(m.q, 2))));
  });
}

function renderMatch(g) {
  const box = $("match-info");
  const next = $("next");
  if (!g.match) {
    box.hidden = true;
    next.hidden = true;
    return;
  }
  box.hidden = false;
  box.replaceChildren(el("strong", {}, `Match, game ${g.match.number} of 2`));
  for (const line of g.match.games) box.append(el("div", {}, line));
  if (g.match.result) box.append(el("div", { id: "match-result", class: "result" }, g.match.result));
  next.hidden = !(g.match.number === 1 && g.outcome);
}

async function step(promise) {
  showError("");
  setBusy(true);
  try {
    render(await promise);
  } catch (e) {
    showError(e.message);
  } finally {
    setBusy(false);
  }
  if (game) render(game);
  await maybeReply();
}

// When it is the agent's move, ask for it (the page shows "thinking" meanwhile).
async function maybeReply() {
  if (!game || game.outcome || game.your_turn || game.thinking) return;
  setBusy(true);
  try {
    render(await api("POST", `/api/games/${game.id}/reply`));
  } catch (e) {
    showError(e.message);
  } finally {
    setBusy(false);
    if (game) render(game);
  }
}

function playMove(mv) {
  if (busy || !game) return;
  // Shown at once; the server confirms (or says why not).
  step(api("POST", `/api/games/${game.id}/move`, { move: mv }));
}

function newGameBody(extra) {
  const body = { side: $("side").value, move_ms: parseInt($("move-ms").value, 10), match: $("match").checked };
  const a = $("agent").value;
  if (a.startsWith("c:")) {
    const [, run, name] = a.split(":");
    body.run = parseInt(run, 10);
    body.checkpoint = name;
  } else {
    body.agent = parseInt(a.slice(2), 10);
  }
  return Object.assign(body, extra || {});
}

async function newGame(extra) {
  if (game) api("DELETE", `/api/games/${game.id}`).catch(() => {});
  game = null;
  await step(api("POST", "/api/games", newGameBody(extra)));
}

function download() {
  if (!game) return;
  const blob = new Blob([game.record], { type: "text/plain" });
  const a = el("a", { href: URL.createObjectURL(blob), download: `brandubh-${game.id.slice(0, 8)}.txt` });
  document.body.append(a);
  a.click();
  a.remove();
}

async function init() {
  try {
    info = await api("GET", "/api/info");
  } catch (e) {
    showError(e.message);
    return;
  }
  fillNav(info, "play");
  const select = $("agent");
  for (const a of info.agents) select.append(el("option", { value: `a:${a.index}` }, a.summary));
  const params = new URLSearchParams(location.search);
  if (params.has("run") && params.has("checkpoint")) {
    const run = parseInt(params.get("run"), 10);
    const name = params.get("checkpoint");
    const r = info.runs.find((x) => x.index === run);
    const label = r ? `${r.name} ${name}` : name;
    select.prepend(el("option", { value: `c:${run}:${name}` }, `checkpoint ${label}`));
    select.value = `c:${run}:${name}`;
  }
  if (params.has("side")) $("side").value = params.get("side") === "black" ? "black" : "white";
  if (params.has("move_ms")) {
    const v = params.get("move_ms");
    if (![...$("move-ms").options].some((o) => o.value === v)) $("move-ms").append(el("option", { value: v }, `${v} ms`));
    $("move-ms").value = v;
  }
  if (select.options.length === 0) {
    showError("The server has no agent files; start it with --agent FILE, or play a checkpoint from a Run page.");
    $("status").textContent = "";
    board.show(null);
    return;
  }
  $("new").onclick = () => newGame();
  $("undo").onclick = () => game && step(api("POST", `/api/games/${game.id}/undo`));
  $("next").onclick = () => game && step(api("POST", `/api/games/${game.id}/next`));
  $("analyze").onclick = async () => {
    if (!game || busy) return;
    showError("");
    setBusy(true);
    $("status").textContent = `${game.agent} is analysing…`;
    try {
      const r = await api("POST", `/api/games/${game.id}/analyze`);
      game.analysis = r.analysis;
    } catch (e) {
      showError(e.message);
    } finally {
      setBusy(false);
      render(game);
    }
  };
  $("download").onclick = download;
  $("copy").onclick = () => game && navigator.clipboard && navigator.clipboard.writeText(game.record);
  $("load").onclick = () => newGame({ record: $("paste").value, match: false });
  await newGame();
}

init();
