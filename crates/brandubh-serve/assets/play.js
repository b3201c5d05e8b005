// The Play page: one game (or two-game match) against an agent through /api/games.
"use strict";

const $ = (id) => document.getElementById(id);
let info = null;
let game = null;
// Requests in flight other than the agent's think (a move, an undo, a new game, ...).
let pending = 0;
// Bumped to abandon the think the page waits for (Undo or New game while it thinks).
let thinkToken = 0;
const SAVED = "brandubh-game";
const board = new Board($("board"), (mv) => playMove(mv));

function showError(message) {
  const e = $("error");
  e.textContent = message || "";
  e.hidden = !message;
}

// What may be pressed now: while the agent thinks, Move now ends its search (it plays its
// best move so far), New game and Undo abandon the think; Analyse waits for the move.
function controls() {
  const busy = pending > 0;
  const thinking = !!(game && game.thinking);
  document.body.classList.toggle("busy", busy);
  for (const id of ["new", "load", "next"]) $(id).disabled = busy;
  $("undo").disabled = busy || !game || !!game.match || game.ply === 0;
  $("analyze").disabled = busy || !game || thinking || !!game.outcome;
  $("stop").hidden = !thinking;
}

function render(g) {
  game = g;
  try { sessionStorage.setItem(SAVED, g.id); } catch (e) { /* storage off: no resume */ }
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
  result.classList.toggle("win", !!(g.outcome && g.outcome.you_won));
  result.classList.toggle("loss", !!(g.outcome && !g.outcome.you_won));
  renderMoves(g);
  renderAnalysis(g);
  renderMatch(g);
  controls();
}

// No game open (the server refused the new one): an empty board and what to do.
function renderNoGame() {
  game = null;
  board.show(null);
  $("board").dataset.turn = "none";
  $("status").classList.remove("thinking");
  $("status").textContent = "No game open: choose the agent and press New game.";
  $("result").hidden = true;
  renderMoves({ moves: [], start: "" });
  renderAnalysis(null);
  renderMatch({});
  controls();
}

// Fits the menus to a game the page did not start (a resumed one).
function showSettings(g) {
  const pick = (select, value, label) => {
    if (![...select.options].some((o) => o.value === value)) select.append(el("option", { value }, label));
    select.value = value;
  };
  pick($("agent"), g.agent_key, `checkpoint ${g.agent}`);
  pick($("move-ms"), String(g.move_ms), `${g.move_ms} ms`);
  $("side").value = g.match && g.match.number === 2 ? (g.human === "white" ? "black" : "white") : g.human;
  $("match").checked = !!g.match;
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

function renderAnalysis(g) {
  const a = g ? g.analysis : null;
  const body = $("top-moves").querySelector("tbody");
  body.replaceChildren();
  const fill = $("value-fill");
  const text = $("value-text");
  if (g && g.outcome) {
    // Nothing is left to analyse: the bar shows the result, the text says whose.
    fill.style.width = g.outcome.winner === "white" ? "100%" : "0%";
    const last = a ? ` The agent's last search (ply ${a.ply}): ${searchSummary(a)}` : "";
    text.textContent = `Game over: ${g.outcome.winner === "white" ? "White" : "Black"} won; there is nothing left to analyse.${last}`;
    return;
  }
  if (!a) {
    fill.style.width = "50%";
    text.textContent = "No analysis yet: the agent's reply brings one, or press Analyse.";
    return;
  }
  // The bar shows White's share: the value is for the side to move at the analysed ply.
  const white = a.side === "white" ? a.value : -a.value;
  fill.style.width = `${(50 + 50 * white).toFixed(1)}%`;
  text.textContent =
    `Value for ${a.side === "white" ? "White" : "Black"} (to move at ply ${a.ply}): ${a.value >= 0 ? "+" : ""}${fmt(a.value, 2)} ` +
    `(network alone ${a.net_value >= 0 ? "+" : ""}${fmt(a.net_value, 2)}); ${searchSummary(a)}`;
  a.top.forEach((m, i) => {
    body.append(el("tr", {}, el("td", {}, String(i + 1)), el("td", {}, m.move), el("td", {}, String(m.visits)),
      el("td", {}, fmt(m.prior, 3)), el("td", {}, m.q === null ? "–" : fmt(m.q, 2))));
  });
}

// How the search went, in words that stay true when it ran no simulation.
function searchSummary(a) {
  if (a.simulations > 0) return `${a.simulations} simulations in ${a.elapsed_ms} ms; best ${a.best}.`;
  if (Math.abs(a.value) === 1) {
    return `the position was proven (a forced ${a.value > 0 ? "win" : "loss"} for the side to move) before any simulation; best ${a.best}.`;
  }
  return `no simulation finished in the time given: ${a.best} is the network's first choice.`;
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

// A request that answers with the game (a move, an undo, the next game of a match).
async function step(promise) {
  showError("");
  pending++;
  controls();
  try {
    render(await promise);
  } catch (e) {
    showError(e.message);
  } finally {
    pending--;
    if (game) render(game);
  }
  await maybeReply();
}

// When it is the agent's move, ask for it (or, for a game resumed while the agent was
// thinking, wait for it). The page shows "thinking" meanwhile; Undo or New game abandon it.
async function maybeReply() {
  if (!game || game.outcome || game.your_turn || pending > 0) return;
  const token = ++thinkToken;
  const id = game.id;
  const waitOnly = game.thinking;
  render(Object.assign({}, game, { thinking: true }));
  try {
    const g = waitOnly ? await waitForThink(id, token) : await api("POST", `/api/games/${id}/reply`);
    if (token === thinkToken && g) render(g);
  } catch (e) {
    if (token !== thinkToken) return; // abandoned: its move was dropped
    showError(e.message);
    render(Object.assign({}, game, { thinking: false }));
  }
}

// Polls a game whose agent is thinking (the reply was asked before a reload) until it moved.
async function waitForThink(id, token) {
  for (;;) {
    const g = await api("GET", `/api/games/${id}`);
    if (!g.thinking || token !== thinkToken) return g;
    await new Promise((r) => setTimeout(r, 300));
  }
}

function playMove(mv) {
  if (pending > 0 || !game || game.thinking) return;
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

// Starts a game; the one open is closed only once the new one exists, so a refused
// request (a bad pasted record, a full game table) leaves it as it was.
async function newGame(extra) {
  const old = game;
  showError("");
  thinkToken++;
  pending++;
  controls();
  try {
    const g = await api("POST", "/api/games", newGameBody(extra));
    if (old) api("DELETE", `/api/games/${old.id}`).catch(() => {});
    render(g);
  } catch (e) {
    showError(e.message);
    if (old) {
      // The old game goes on (its agent may have moved meanwhile).
      try { render(await api("GET", `/api/games/${old.id}`)); } catch (e2) { render(old); }
    } else {
      renderNoGame();
    }
  } finally {
    pending--;
    controls();
  }
  await maybeReply();
}

// The game this tab had open before a reload, if the server still has it: true when it
// was resumed, false when there was none to resume, or why it could not be.
async function resume(params) {
  let saved = null;
  try { saved = sessionStorage.getItem(SAVED); } catch (e) { return false; }
  if (!saved) return false;
  try {
    const g = await api("GET", `/api/games/${encodeURIComponent(saved)}`);
    const wanted = params.has("checkpoint") ? `c:${params.get("run")}:${params.get("checkpoint")}` : null;
    if (wanted && g.agent_key !== wanted) return false;
    showSettings(g);
    render(g);
    await maybeReply();
    return true;
  } catch (e) {
    try { sessionStorage.removeItem(SAVED); } catch (e2) { /* nothing kept */ }
    return `Your last game could not be resumed (${e.message}); a new one was started.`;
  }
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
  $("undo").onclick = () => {
    if (!game) return;
    thinkToken++;
    step(api("POST", `/api/games/${game.id}/undo`));
  };
  $("next").onclick = () => game && step(api("POST", `/api/games/${game.id}/next`));
  // The reply under way then answers with the move.
  $("stop").onclick = () => game && api("POST", `/api/games/${game.id}/stop`).catch((e) => showError(e.message));
  $("analyze").onclick = async () => {
    if (!game || pending > 0 || game.thinking) return;
    showError("");
    pending++;
    controls();
    $("status").textContent = `${game.agent} is analysing…`;
    try {
      const r = await api("POST", `/api/games/${game.id}/analyze`);
      game.analysis = r.analysis;
    } catch (e) {
      showError(e.message);
    } finally {
      pending--;
      render(game);
    }
  };
  $("download").onclick = download;
  $("copy").onclick = () => game && navigator.clipboard && navigator.clipboard.writeText(game.record);
  $("load").onclick = () => newGame({ record: $("paste").value, match: false });
  const resumed = await resume(params);
  if (resumed === true) return;
  await newGame();
  if (typeof resumed === "string" && $("error").hidden) showError(resumed);
}

init();
