// Hand-drawn SVG line charts for the Run page.
"use strict";

const COLORS = ["#2f6db5", "#b3261e", "#1d7a3a", "#9c6b12", "#6b3fa0", "#555"];

// Round tick values between lo and hi, about n of them; integers only when `integer`.
function niceTicks(lo, hi, n, integer) {
  if (!(hi > lo)) { hi = lo + 1; }
  const span = hi - lo;
  const step0 = span / n;
  const mag = Math.pow(10, Math.floor(Math.log10(step0)));
  let step = [1, 2, 5, 10].map((m) => m * mag).find((s) => span / s <= n) || 10 * mag;
  if (integer) step = Math.max(1, Math.round(step));
  const ticks = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) ticks.push(+v.toFixed(10));
  return ticks;
}

// A line chart in `container`: opts = {key, title, xlabel, series: [{name, points: [[x, y]]}],
// ymin, ymax, bands: [{name, y}] (dashed horizontal lines), errors: [[x, lo, hi]]}.
function lineChart(container, opts) {
  const W = 420, H = 250, L = 48, R = 12, T = 40, B = 34;
  const pts = opts.series.flatMap((s) => s.points.filter((p) => Number.isFinite(p[1])));
  const xs = pts.map((p) => p[0]);
  const ys = pts.map((p) => p[1]).concat((opts.bands || []).map((b) => b.y))
    .concat((opts.errors || []).flatMap((e) => [e[1], e[2]]));
  let xmin = Math.min(...xs), xmax = Math.max(...xs);
  if (!Number.isFinite(xmin)) { xmin = 0; xmax = 1; }
  if (xmin === xmax) { xmin -= 1; xmax += 1; }
  let ymin = opts.ymin !== undefined ? opts.ymin : Math.min(...ys);
  let ymax = opts.ymax !== undefined ? opts.ymax : Math.max(...ys);
  if (!Number.isFinite(ymin) || !Number.isFinite(ymax)) { ymin = 0; ymax = 1; }
  if (ymin === ymax) { ymin -= 1; ymax += 1; }
  const pad = (ymax - ymin) * 0.05;
  if (opts.ymin === undefined) ymin -= pad;
  if (opts.ymax === undefined) ymax += pad;
  const X = (x) => L + (x - xmin) / (xmax - xmin) * (W - L - R);
  const Y = (y) => H - B - (y - ymin) / (ymax - ymin) * (H - T - B);
  const svg = svgEl("svg", { viewBox: `0 0 ${W} ${H}`, "data-chart": opts.key,
    "data-points": String(Math.max(0, ...opts.series.map((s) => s.points.length))) });
  svg.append(svgEl("text", { x: L, y: 16, class: "title" }, opts.title));
  for (const t of niceTicks(ymin, ymax, 5)) {
    svg.append(svgEl("line", { x1: L, x2: W - R, y1: Y(t), y2: Y(t), class: "grid" }));
    svg.append(svgEl("text", { x: L - 5, y: Y(t) + 4, class: "tick", "text-anchor": "end" }, String(t)));
  }
  for (const t of niceTicks(xmin, xmax, 6, true).filter((t) => t >= xmin && t <= xmax)) {
    svg.append(svgEl("text", { x: X(t), y: H - B + 15, class: "tick x-tick", "text-anchor": "middle" }, String(t)));
  }
  svg.append(svgEl("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, class: "axis" }));
  svg.append(svgEl("line", { x1: L, x2: L, y1: T, y2: H - B, class: "axis" }));
  svg.append(svgEl("text", { x: (L + W - R) / 2, y: H - 4, class: "tick", "text-anchor": "middle" }, opts.xlabel || "iteration"));
  (opts.bands || []).forEach((b) => {
    svg.append(svgEl("line", { x1: L, x2: W - R, y1: Y(b.y), y2: Y(b.y), stroke: "#888", "stroke-dasharray": "4 3" }));
    svg.append(svgEl("text", { x: W - R - 2, y: Y(b.y) - 3, class: "tick", "text-anchor": "end" }, b.name));
  });
  for (const [x, lo, hi] of opts.errors || []) {
    svg.append(svgEl("line", { x1: X(x), x2: X(x), y1: Y(lo), y2: Y(hi), stroke: "#9bb5d8", "stroke-width": 3 }));
  }
  opts.series.forEach((s, k) => {
    const color = COLORS[k % COLORS.length];
    const good = s.points.filter((p) => Number.isFinite(p[1]));
    if (good.length > 1) {
      const d = good.map((p, i) => `${i ? "L" : "M"}${X(p[0]).toFixed(1)} ${Y(p[1]).toFixed(1)}`).join(" ");
      svg.append(svgEl("path", { d, class: "series", stroke: color, "data-series": s.name }));
    }
    for (const p of good) {
      svg.append(svgEl("circle", { cx: X(p[0]), cy: Y(p[1]), r: good.length > 60 ? 1.5 : 3, fill: color }));
    }
    const lx = L + k * 110;
    svg.append(svgEl("rect", { x: lx, y: 25, width: 10, height: 3, fill: color }));
    svg.append(svgEl("text", { x: lx + 14, y: 30, class: "legend" }, s.name));
  });
  if (pts.length === 0) {
    svg.append(svgEl("text", { x: (L + W - R) / 2, y: (T + H - B) / 2, class: "tick", "text-anchor": "middle" },
      opts.empty || "no data yet"));
  }
  const box = el("div", { class: "chart" });
  box.append(svg);
  container.append(box);
  return svg;
}
