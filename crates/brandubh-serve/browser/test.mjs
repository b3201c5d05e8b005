// The browser test of `brandubh serve` (run by tests/browser.rs, which starts the server):
//   node test.mjs URL SCRATCH_DIR
// Headless Chromium from Debian's package, driven by playwright-core. Plays on the Play
// page by clicking and dragging, a whole game to its end, an analysis, pasted records (a
// bad one leaves the game as it was), a captured King, a reload that resumes the game, an
// Undo that abandons a long think, errors instead of a blank board; opens the Run page of a
// tiny run and checks its charts, also on a 375-px phone screen. Then a page of another
// origin (a second server on another port) tries to drive the API, and a name rebound to
// 127.0.0.1 tries to reach it: both are refused. Screenshots go to SCRATCH_DIR.
import { chromium } from "playwright-core";
import { createServer } from "node:http";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const [url, out] = process.argv.slice(2);
if (!url || !out) {
  console.error("usage: node test.mjs URL SCRATCH_DIR");
  process.exit(2);
}
mkdirSync(out, { recursive: true });
const profile = join(out, "profile");
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  viewport: { width: 1100, height: 760 },
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const page = context.pages()[0] || (await context.newPage());
const errors = [];
page.on("pageerror", (e) => errors.push(`page error: ${e.message}`));
// The refused requests of steps 5 and 7 (400), of the abandoned think (409: its move is
// dropped) and of the full table (503) are deliberate; any other failed load is an error.
const deliberate = ["status of 400", "status of 409", "status of 503", "status of 404"];
page.on("console", (m) => {
  if (m.type() === "error" && !deliberate.some((d) => m.text().includes(d))) errors.push(`console: ${m.text()}`);
});
page.setDefaultTimeout(60_000);

// The other origin: a page on another port whose script tries the API of `url` in
// every way a page can (a no-cors text POST, a JSON POST that needs a preflight, a form,
// a read), then reports what it got.
const EVIL_PAGE = (target) => `<!doctype html><title>another site</title><body><script>
(async () => {
  const r = {};
  try { await fetch("${target}/api/games", { method: "POST", mode: "no-cors", headers: { "Content-Type": "text/plain" }, body: "{}" }); r.nocors = "sent"; } catch (e) { r.nocors = "blocked"; }
  try { const x = await fetch("${target}/api/games", { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" }); r.cors = String(x.status); } catch (e) { r.cors = "blocked"; }
  try { const x = await fetch("${target}/api/info"); r.read = await x.text(); } catch (e) { r.read = "blocked"; }
  const f = document.createElement("form");
  f.method = "POST"; f.action = "${target}/api/games"; f.enctype = "text/plain"; f.target = "sink";
  const i = document.createElement("input"); i.name = '{"a":'; i.value = '1}'; f.append(i);
  const sink = document.createElement("iframe"); sink.name = "sink"; document.body.append(sink, f);
  f.submit();
  r.form = "sent";
  setTimeout(() => { window.report = r; }, 1500);
})();
</script></body>`;
let evil = { close() {} };

async function crossOrigin(context, target, out) {
  const before = (await (await fetch(`${target}/api/info`)).json()).open_games;
  evil = createServer((req, res) => {
    res.writeHead(200, { "Content-Type": "text/html" });
    res.end(EVIL_PAGE(target));
  });
  await new Promise((r) => evil.listen(0, "127.0.0.1", r));
  const origin = `http://127.0.0.1:${evil.address().port}`;
  const p = await context.newPage();
  await p.goto(origin);
  const report = await (await p.waitForFunction(() => window.report, null, { timeout: 30_000 })).jsonValue();
  await p.screenshot({ path: join(out, "cross-origin.png") });
  await p.close();
  evil.close();
  check(report.cors === "blocked", `another origin's JSON POST fails its preflight (${report.cors})`);
  check(report.read === "blocked", "another origin cannot read the API");
  const after = (await (await fetch(`${target}/api/info`)).json()).open_games;
  check(after === before, `no game was opened by ${origin}'s no-cors POST, form and fetch (${before} before, ${after} after)`);
}

async function rebound(target, out) {
  const port = new URL(target).port;
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--host-resolver-rules=MAP rebound.test 127.0.0.1"],
  });
  const p = await browser.newPage();
  const r = await p.goto(`http://rebound.test:${port}/`);
  const body = await p.textContent("body");
  await p.screenshot({ path: join(out, "rebound.png") });
  await browser.close();
  check(r.status() === 403 && body.includes('Host \\"rebound.test:' + port + '\\" is not this server\'s name'),
    `a page at rebound.test:${port} (resolved to 127.0.0.1) is refused: ${r.status()} ${body.slice(0, 80)}`);
}

function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`);
  console.log(`ok: ${what}`);
}

async function turn() {
  await page.waitForSelector('#board[data-turn="you"], #board[data-turn="over"]');
  return page.getAttribute("#board", "data-turn");
}

async function click(square) {
  await page.click(`[data-square="${square}"]`);
}

// Loads a pasted record that starts a game with you to move, and plays from-to.
async function pasteAndPlay(record, from, to) {
  await page.fill("#paste", record);
  await page.click("#load");
  await page.waitForSelector('#board[data-ply="0"][data-turn="you"]');
  await click(from);
  await click(to);
}

try {
  // 1. A move by clicking: piece, then one of its marked destinations.
  await page.goto(`${url}/?move_ms=20`);
  check((await turn()) === "you", "the Play page opens with White (you) to move");
  check((await page.locator("#board text.label").count()) === 28, "ranks and files are labelled on all four sides");
  check((await page.locator("#board rect.castle").count()) === 1 && (await page.locator("#board rect.corner").count()) === 4,
    "the Castle and the four corners are marked");
  await click("d5");
  check((await page.locator("[data-dest]").count()) > 0, "a selected piece shows its legal destinations");
  check((await page.locator('[data-dest="c5"]').count()) === 1, "d5 may go to c5");
  await click("c5");
  await page.waitForSelector('#board[data-ply="2"]');
  check((await turn()) === "you", "the agent replied and it is your move again");
  const first = await page.textContent("#moves li:first-child");
  check(first.includes("d5-c5"), `the move list starts with d5-c5 (${first.trim()})`);
  check((await page.locator('[data-at="c5"][data-piece="D"]').count()) === 1, "the defender stands on c5");
  check((await page.locator("#board rect.last-to").count()) === 1, "the agent's last move is highlighted");
  check((await page.locator("#top-moves tbody tr").count()) > 0, "the agent's reply brings its top moves");
  await page.screenshot({ path: join(out, "play-1.png") });

  // 2. A move by dragging.
  const [from, to] = (await page.evaluate(() => game.legal[0])).split("-");
  const box = async (sq) => page.locator(`[data-square="${sq}"]`).boundingBox();
  const a = await box(from), b = await box(to);
  await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
  await page.mouse.down();
  await page.mouse.move((a.x + b.x) / 2 + a.width / 2, (a.y + b.y) / 2 + a.height / 2, { steps: 5 });
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 5 });
  await page.mouse.up();
  await page.waitForSelector('#board[data-ply="4"]');
  check((await page.evaluate(() => game.moves[2])) === `${from}-${to}`, `a dragged move ${from}-${to} was played`);

  // 3. Undo takes back the person's move and the reply.
  await turn();
  await page.click("#undo");
  await page.waitForSelector('#board[data-ply="2"][data-turn="you"]');
  check(true, "undo went back to ply 2");

  // 4. The whole game, by clicks, to its end.
  for (let i = 0; i < 1500; i++) {
    if ((await turn()) === "over") break;
    const ply = await page.getAttribute("#board", "data-ply");
    const [f, t] = (await page.evaluate(() => game.legal[game.legal.length - 1])).split("-");
    await click(f);
    await click(t);
    await page.waitForFunction((p) => document.getElementById("board").dataset.ply !== p, ply);
  }
  check((await turn()) === "over", "the game ended");
  const result = (await page.textContent("#result")).trim();
  check(/^(You win|You lose, tiny wins): .* \(rule 8\.\d\) after \d+ plies\.$/.test(result), `the result is shown: "${result}"`);
  const won = result.startsWith("You win");
  check((await page.getAttribute("#result", "class")).split(" ").includes(won ? "win" : "loss"),
    `the result box is marked as a ${won ? "win" : "loss"}`);
  if (result.includes("the King was captured")) {
    check((await page.locator("[data-captured-king]").count()) === 1, "the captured King is drawn as captured");
  }
  await page.screenshot({ path: join(out, "play-end.png") });

  // 5. A move the API refuses is explained in words.
  await page.evaluate(() => playMove("d5-d6"));
  await page.waitForSelector("#error:not([hidden])");
  const error = await page.textContent("#error");
  check(/^illegal move d5-d6: the game is over$/.test(error.trim()), `the refusal is shown: "${error.trim()}"`);

  // 6. Analysis: the value bar, the top moves and arrows on the board.
  await page.click("#new");
  await page.waitForSelector('#board[data-ply="0"][data-turn="you"]');
  await page.click("#analyze");
  await page.waitForSelector("[data-arrow]");
  check((await page.locator("#top-moves tbody tr").count()) === 5, "the analysis lists five top moves");
  const width = await page.evaluate(() => document.getElementById("value-fill").style.width);
  check(/^\d+(\.\d)?%$/.test(width), `the value bar is drawn (${width})`);
  await page.screenshot({ path: join(out, "play-analysis.png") });

  // 7. A pasted record continues a game.
  await page.click("summary");
  await page.fill("#paste", "1. d5-c5 d6-e6\n2. c4-c3");
  await page.click("#load");
  await page.waitForSelector('#board[data-ply="4"][data-turn="you"]');
  check((await page.evaluate(() => game.moves.slice(0, 3).join(" "))) === "d5-c5 d6-e6 c4-c3", "a pasted game continues");

  // 7b. A bad record is refused in words, and the game open goes on.
  const before = await page.evaluate(() => ({ id: game.id, ply: game.ply }));
  await page.fill("#paste", "d5-c5 d5-c5");
  await page.click("#load");
  await page.waitForSelector("#error:not([hidden])");
  const pasteError = (await page.textContent("#error")).trim();
  check(pasteError.startsWith("record move 2 (ply 2): illegal move d5-c5"), `a bad record is refused ("${pasteError}")`);
  const kept = await page.evaluate(() => ({ id: game.id, ply: game.ply }));
  check(kept.id === before.id && kept.ply === before.ply, "the game open survives the failed paste");
  const [kf, kt] = (await page.evaluate(() => game.legal[0])).split("-");
  await click(kf);
  await click(kt);
  await page.waitForSelector(`#board[data-ply="${before.ply + 2}"][data-turn="you"]`);
  check(true, "and it still plays: a move and the agent's reply");

  // 7c. A reload resumes the game.
  const saved = await page.evaluate(() => ({ id: game.id, ply: game.ply, moves: game.moves.join(" ") }));
  await page.reload();
  await page.waitForSelector(`#board[data-ply="${saved.ply}"][data-turn="you"]`);
  const back = await page.evaluate(() => ({ id: game.id, moves: game.moves.join(" ") }));
  check(back.id === saved.id && back.moves === saved.moves, `a reload resumes the game at ply ${saved.ply}`);
  check((await page.locator("#moves li").count()) === Math.ceil(saved.ply / 2), "with its move list");
  await page.click("summary");

  // 8. A capture (rule 5) is marked, still after the agent's reply.
  await pasteAndPlay("start 5A1/7/2D4/1A1K3/1D5/7/7 w", "c5", "b5");
  await page.waitForSelector('#board[data-ply="2"]');
  check((await page.locator('[data-captured-before="b4"]').count()) === 1, "the captured attacker's square b4 is marked");
  await page.screenshot({ path: join(out, "play-capture.png") });

  // 8b. A captured King (rule 7) is drawn as captured; the result says who won.
  await page.selectOption("#side", "black");
  await pasteAndPlay("start 3A3/1AK4/7/7/7/7/7 b", "d7", "d6");
  await page.waitForSelector('#board[data-turn="over"]');
  check((await page.locator('[data-captured-king="c6"]').count()) === 1, "the captured King on c6 is drawn as captured");
  const kingResult = (await page.textContent("#result")).trim();
  check(/^You win: the King was captured \(rule 8\.2\) after 1 plies\.$/.test(kingResult), `the result: "${kingResult}"`);
  check((await page.getAttribute("#result", "class")).includes("win"), "the result box is marked as a win");
  const overText = await page.textContent("#value-text");
  check(overText.startsWith("Game over: Black won; there is nothing left to analyse."), `the analysis panel says so ("${overText}")`);
  check(await page.isDisabled("#analyze"), "Analyse is off at game over");
  await page.screenshot({ path: join(out, "play-king.png") });
  await page.selectOption("#side", "white");

  // 8c. Undo while the agent thinks abandons the think at once; its move is dropped.
  await page.selectOption("#move-ms", "3000");
  await page.click("#new");
  await page.waitForSelector('#board[data-ply="0"][data-turn="you"]');
  await click("d5");
  await click("c5");
  await page.waitForSelector('#board[data-ply="1"][data-turn="agent"]');
  check(!(await page.isDisabled("#undo")) && !(await page.isDisabled("#new")), "Undo and New game stay usable while the agent thinks");
  const t0 = Date.now();
  await page.click("#undo");
  await page.waitForSelector('#board[data-ply="0"][data-turn="you"]');
  check(Date.now() - t0 < 2500, `Undo took back the move at once (${Date.now() - t0} ms, the think was 3 s)`);
  await page.waitForTimeout(3500);
  const after = await page.evaluate(async () => (await api("GET", `/api/games/${game.id}`)).ply);
  check(after === 0 && (await page.getAttribute("#board", "data-ply")) === "0", "the abandoned think's move was dropped");
  // Move now: the agent plays its best move so far.
  await click("d5");
  await click("c5");
  await page.waitForSelector('#board[data-ply="1"][data-turn="agent"]');
  await page.waitForSelector("#stop:not([hidden])");
  await page.screenshot({ path: join(out, "play-thinking.png") });
  const t1 = Date.now();
  await page.click("#stop");
  await page.waitForSelector('#board[data-ply="2"][data-turn="you"]');
  check(Date.now() - t1 < 2500, `Move now: the agent moved at once (${Date.now() - t1} ms of a 3-s think)`);
  check(await page.isHidden("#stop"), "Move now is hidden once it is your turn");
  await page.selectOption("#move-ms", "100");

  // 9. The Run page of the tiny run: charts of its two iterations, its checkpoints.
  await page.goto(`${url}/run?run=0&poll=500`);
  await page.waitForSelector('[data-chart="loss"]');
  for (const key of ["loss", "winrate", "length", "throughput", "games", "evaluation"]) {
    const n = await page.getAttribute(`[data-chart="${key}"]`, "data-points");
    check(n === "2", `chart ${key} shows the run's 2 iterations`);
  }
  const ticks = await page.locator('[data-chart="loss"] .x-tick').allTextContents();
  check(ticks.join(",") === "1,2", `the iteration axis is labelled 1, 2 (${ticks.join(",")})`);
  const activity = await page.textContent("#activity");
  check(activity === "Iteration 2 of 2 complete; the run is finished.", `the activity is shown: "${activity}"`);
  check((await page.locator("#checkpoints tbody tr").count()) === 3, "the three checkpoints are listed");
  await page.screenshot({ path: join(out, "run.png"), fullPage: true });

  // 9b. On a 375-px phone screen nothing is wider than the screen.
  await page.setViewportSize({ width: 375, height: 800 });
  await page.waitForTimeout(300);
  const fit = await page.evaluate(() => ({
    page: document.documentElement.scrollWidth,
    charts: Math.max(...[...document.querySelectorAll(".chart")].map((c) => c.getBoundingClientRect().right)),
  }));
  check(fit.page <= 375 && fit.charts <= 375, `the Run page fits 375 px (page ${fit.page} px, charts end at ${fit.charts.toFixed(0)} px)`);
  await page.screenshot({ path: join(out, "run-375.png"), fullPage: true });
  await page.setViewportSize({ width: 1100, height: 760 });

  // 9c. A checkpoint that does not exist: an error and an empty board, not "Loading…".
  await page.evaluate(() => sessionStorage.clear());
  await page.goto(`${url}/?run=0&checkpoint=iter-999999`);
  await page.waitForSelector("#error:not([hidden])");
  const bad = (await page.textContent("#error")).trim();
  check(bad === 'run tiny has no checkpoint "iter-999999"', `a bad checkpoint is named ("${bad}")`);
  check((await page.textContent("#status")).startsWith("No game open"), "the status says no game is open");
  check((await page.locator("#board rect.sq").count()) === 49, "the board is drawn, empty");
  await page.goto(`${url}/run?run=0&poll=500`);
  await page.waitForSelector("#checkpoints tbody tr");

  // 10. Play a checkpoint from the Run page.
  await page.click("#checkpoints tbody tr:first-child a.play-link");
  await page.waitForSelector('#board[data-turn="you"]');
  const agent = await page.inputValue("#agent");
  check(agent === "c:0:iter-000002", `the Play page plays the chosen checkpoint (${agent})`);
  // The agent's thinking is shown while it searches (1 s a move, you as Black).
  await page.selectOption("#side", "black");
  await page.selectOption("#move-ms", "1000");
  await page.click("#new");
  // The class and the text are read in one step: on a loaded machine the reply may come
  // between two separate reads.
  const thinking = await (
    await page.waitForFunction(() => {
      const status = document.getElementById("status");
      return status.classList.contains("thinking") ? status.textContent : null;
    })
  ).jsonValue();
  check(thinking.includes("is thinking"), `the page shows the agent thinking ("${thinking}")`);
  // A reload while the agent thinks: the page finds the game and waits for the move.
  await page.reload();
  await page.waitForSelector('#board[data-ply="1"][data-turn="you"]');
  check((await page.textContent("#status")).startsWith("Your move (Black)"), "after a reload mid-think, it is your move as Black");
  await page.setViewportSize({ width: 375, height: 800 });
  await page.waitForTimeout(300);
  const playWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  check(playWidth <= 375, `the Play page fits 375 px (${playWidth} px)`);
  await page.screenshot({ path: join(out, "play-375.png"), fullPage: true });
  await page.setViewportSize({ width: 1100, height: 760 });

  // 11. A full game table: a new tab gets an error and an empty board.
  const open = (await (await fetch(`${url}/api/info`)).json()).open_games;
  const limit = (await (await fetch(`${url}/api/info`)).json()).limits.max_games;
  const filler = [];
  for (let i = open; i < limit; i++) {
    const r = await fetch(`${url}/api/games`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    if (r.status === 201) filler.push((await r.json()).id);
  }
  const tab = await context.newPage();
  tab.on("console", (m) => {
    if (m.type() === "error" && !deliberate.some((d) => m.text().includes(d))) errors.push(`console: ${m.text()}`);
  });
  await tab.goto(url);
  await tab.waitForSelector("#error:not([hidden])");
  const full = (await tab.textContent("#error")).trim();
  check(full.startsWith(`too many open games (${limit})`), `a full table is said ("${full}")`);
  check((await tab.textContent("#status")).startsWith("No game open"), "with no game open, not Loading…");
  await tab.screenshot({ path: join(out, "play-full.png") });
  await tab.close();
  for (const id of filler) await fetch(`${url}/api/games/${id}`, { method: "DELETE" });

  // 12. A page of another origin (another port of 127.0.0.1) tries to drive the API.
  await crossOrigin(context, url, out);
  // 13. A name rebound to 127.0.0.1 (DNS rebinding) reaches the server: refused.
  await rebound(url, out);
  check(errors.length === 0, `no script errors (${errors.join("; ")})`);
  console.log("browser test passed");
} catch (e) {
  await page.screenshot({ path: join(out, "failure.png") }).catch(() => {});
  evil.close();
  console.error(e.stack || String(e));
  for (const x of errors) console.error(x);
  await context.close();
  process.exit(1);
}
await context.close();
