// The Run page: a run's learning curves, Elo ladder and checkpoints, polled while it trains.
"use strict";

const params = new URLSearchParams(location.search);
const runIndex = parseInt(params.get("run") || "0", 10);
const pollMs = Math.max(500, parseInt(params.get("poll") || "3000", 10));
const $ = (id) => document.getElementById(id);
let lastKey = "";

function series(metrics, name, f) {
  return { name, points: metrics.map((m) => [m.iteration, f(m) === null ? NaN : f(m)]) };
}

function drawCharts(metrics) {
  const box = $("charts");
  box.replaceChildren();
  if (metrics.length === 0) {
    box.append(el("p", {}, "No complete iteration yet: the curves appear after the first."));
    return;
  }
  lineChart(box, { key: "loss", title: "Training loss", series: [
    series(metrics, "policy", (m) => m.policy_loss),
    series(metrics, "value", (m) => m.value_loss),
    series(metrics, "total", (m) => m.total_loss)] });
  lineChart(box, { key: "winrate", title: "Self-play results", ymin: 0, ymax: 1, series: [
    series(metrics, "White wins", (m) => m.white_win_rate),
    series(metrics, "Black wins", (m) => m.black_win_rate),
    series(metrics, "unfinished", (m) => m.unfinished_rate)] });
  lineChart(box, { key: "length", title: "Mean self-play game length (plies)", series: [
    series(metrics, "plies", (m) => m.mean_game_length)] });
  lineChart(box, { key: "throughput", title: "Self-play network evaluations per second", series: [
    series(metrics, "evaluations/s", (m) => m.evaluations_per_s)] });
  lineChart(box, { key: "games", title: "Self-play games per minute", series: [
    series(metrics, "games/min", (m) => (m.selfplay_s > 0 ? (m.selfplay_games / m.selfplay_s) * 60 : null))] });
  const score = (s) => (s ? (s.wins + 0.5 * s.draws) / s.matches : null);
  const baseline = metrics.map((m) => m.vs_baseline && m.vs_baseline.opponent).find((x) => x) || "baseline";
  lineChart(box, { key: "evaluation", title: "Evaluation: match score of each new network", ymin: 0, ymax: 1,
    empty: "no evaluation matches in this run",
    bands: [{ name: "even", y: 0.5 }], series: [
      series(metrics, "vs previous", (m) => score(m.vs_previous)),
      series(metrics, `vs ${baseline}`, (m) => score(m.vs_baseline))] });
}

function drawLadder(ladder) {
  const box = $("ladder");
  box.replaceChildren();
  if (!ladder || ladder.entries.length === 0) {
    box.append(el("p", {}, "Not rated yet: run `brandubh ladder RUN` to rate its checkpoints."));
    return;
  }
  const ckpts = ladder.entries.filter((e) => e.checkpoint).sort((a, b) => (a.step || 0) - (b.step || 0));
  const iterOf = (e) => { const m = /(\d+)$/.exec(e.name); return m ? parseInt(m[1], 10) : e.step || 0; };
  lineChart(box, { key: "elo", title: `Elo (${ladder.anchor} = 0, 95 % intervals)`, xlabel: "checkpoint",
    bands: ladder.entries.filter((e) => !e.checkpoint).map((e) => ({ name: e.name, y: e.rating.elo })),
    errors: ckpts.map((e) => [iterOf(e), e.rating.low, e.rating.high]),
    series: [{ name: "checkpoints", points: ckpts.map((e) => [iterOf(e), e.rating.elo]) }] });
  const table = el("table", { class: "ladder small" },
    el("thead", {}, el("tr", {}, el("th", {}, "player"), el("th", {}, "Elo"), el("th", {}, "95 %"), el("th", {}, "games"))));
  const body = el("tbody");
  for (const e of ladder.entries) {
    body.append(el("tr", {}, el("td", {}, e.name), el("td", {}, fmt(e.rating.elo, 0)),
      el("td", {}, `${fmt(e.rating.low, 0)} … ${fmt(e.rating.high, 0)}`), el("td", {}, String(e.games))));
  }
  table.append(body);
  box.append(el("div", { class: "table-wrap" }, table));
}

function drawCheckpoints(list) {
  const body = $("checkpoints").querySelector("tbody");
  body.replaceChildren();
  for (const c of list.slice().reverse()) {
    const when = new Date(c.created_unix_s * 1000).toLocaleString();
    const href = `/?run=${runIndex}&checkpoint=${encodeURIComponent(c.name)}`;
    body.append(el("tr", {}, el("td", {}, c.name), el("td", {}, c.iteration === null ? "–" : String(c.iteration)),
      el("td", {}, String(c.step)), el("td", {}, when),
      el("td", {}, el("a", { href, class: "play-link" }, el("button", { tabindex: -1 }, "Play against it")))));
  }
}

async function poll() {
  try {
    const snap = await api("GET", `/api/runs/${runIndex}`);
    $("error").hidden = true;
    $("run-name").textContent = `Run ${snap.name}` + (snap.config_name ? ` (config ${snap.config_name})` : "");
    const of = snap.planned_iterations ? ` of ${snap.planned_iterations}` : "";
    $("activity").textContent = `Iteration ${snap.iteration}${of} complete; ${snap.activity}.`;
    $("activity").dataset.iteration = String(snap.iteration);
    $("updated").textContent = `updated ${new Date().toLocaleTimeString()}`;
    const probs = $("problems");
    probs.replaceChildren(...snap.problems.map((p) => el("li", {}, p)));
    probs.hidden = snap.problems.length === 0;
    // Redraw only what changed (a poll of an idle run changes nothing).
    const key = JSON.stringify([snap.metrics.length, snap.metrics.at(-1), snap.ladder && snap.ladder.entries.length,
      snap.checkpoints.length]);
    if (key !== lastKey) {
      lastKey = key;
      drawCharts(snap.metrics);
      drawLadder(snap.ladder);
      drawCheckpoints(snap.checkpoints);
    }
  } catch (e) {
    $("error").textContent = e.message;
    $("error").hidden = false;
  }
  setTimeout(poll, pollMs);
}

api("GET", "/api/info").then((info) => fillNav(info, `run${runIndex}`)).catch((e) => {
  $("error").textContent = e.message;
  $("error").hidden = false;
});
poll();
