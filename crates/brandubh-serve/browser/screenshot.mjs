// Regenerates docs/serve-play.png: `brandubh serve` must be running at URL (with the
// shipped model as agent 0).   node screenshot.mjs URL OUT.png
import { chromium } from "playwright-core";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [url, out] = process.argv.slice(2);
const context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "bz-shot-")), {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  viewport: { width: 1100, height: 640 },
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const page = context.pages()[0] || (await context.newPage());
await page.goto(`${url}/?move_ms=300`);
const moveTo = async (from, to) => {
  const ply = await page.getAttribute("#board", "data-ply");
  await page.click(`[data-square="${from}"]`);
  await page.click(`[data-square="${to}"]`);
  await page.waitForFunction((p) => {
    const b = document.getElementById("board");
    return b.dataset.ply !== p && b.dataset.turn === "you";
  }, ply);
};
await page.waitForSelector('#board[data-turn="you"]');
await moveTo("d5", "c5");
const next = await page.evaluate(() => game.legal.find((m) => m.startsWith("e4-")) || game.legal[0]);
await moveTo(...next.split("-"));
await page.click("#analyze");
await page.waitForSelector("[data-arrow]");
await page.click('[data-square="d4"]');
await page.screenshot({ path: out });
await context.close();
