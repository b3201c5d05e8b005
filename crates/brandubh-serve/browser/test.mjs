// The browser test of `brandubh serve` (run by tests/browser.rs, which starts the server):
//   node test.mjs URL SCRATCH_DIR
// Headless Chromium from Debian's package, driven by playwright-core. Plays on the Play
// page by clicking and dragging, a whole game to its end, an analysis; opens the Run page
// of a tiny run and checks its charts. Screenshots go to SCRATCH_DIR.
import { chromium } from "playwright-core";
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
// The one refused request of step 5 is deliberate; any other failed load is an error.
page.on("console", (m) => {
  if (m.type() === "error" && !m.text().includes("status of 400")) errors.push(`console: ${m.text()}`);
});
page.setDefaultTimeout(60_000);

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
  check(/^(You win|tiny wins): .* \(rule 8\.\d\) after \d+ plies\.$/.test(result), `the result is shown: "${result}"`);
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

  // 8. A capture (rule 5) is marked, still after the agent's reply.
  await page.fill("#paste", "start 5A1/7/2D4/1A1K3/1D5/7/7 w");
  await page.click("#load");
  await page.waitForSelector('#board[data-ply="0"][data-turn="you"]');
  await click("c5");
  await click("b5");
  await page.waitForSelector('#board[data-ply="2"]');
  check((await page.locator('[data-captured-before="b4"]').count()) === 1, "the captured attacker's square b4 is marked");
  await page.screenshot({ path: join(out, "play-capture.png") });

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
  await page.waitForSelector('#board[data-ply="1"][data-turn="you"]');
  check((await page.textContent("#status")).startsWith("Your move (Black)"), "then it is your move as Black");
  check(errors.length === 0, `no script errors (${errors.join("; ")})`);
  console.log("browser test passed");
} catch (e) {
  await page.screenshot({ path: join(out, "failure.png") }).catch(() => {});
  console.error(e.stack || String(e));
  for (const x of errors) console.error(x);
  await context.close();
  process.exit(1);
}
await context.close();
