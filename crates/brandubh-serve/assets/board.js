// The SVG board: ranks and files labelled, Castle and corners marked, pieces, the last
// move and captures highlighted, a selection with its legal destinations, and analysis
// arrows. Moves by click (piece, then destination) or by drag.
"use strict";

const FILES = "abcdefg";
const CELL = 64;
const MARGIN = 30;
const SIZE = 7;

function squareName(index) {
  return FILES[index % SIZE] + String(Math.floor(index / SIZE) + 1);
}

function squareIndex(name) {
  const f = FILES.indexOf(name[0]);
  const r = parseInt(name.slice(1), 10) - 1;
  return r * SIZE + f;
}

// Top-left corner of a square in SVG coordinates (rank 7 at the top).
function cellXY(index) {
  const f = index % SIZE;
  const r = Math.floor(index / SIZE);
  return [MARGIN + f * CELL, MARGIN + (SIZE - 1 - r) * CELL];
}

function cellCentre(index) {
  const [x, y] = cellXY(index);
  return [x + CELL / 2, y + CELL / 2];
}

const RESTRICTED = new Set([0, 6, 42, 48, 24]);

class Board {
  // onMove(moveText) is called with a legal move chosen on the board.
  constructor(svg, onMove) {
    this.svg = svg;
    this.onMove = onMove;
    this.state = null;
    this.selected = null;
    this.drag = null;
    const total = MARGIN * 2 + CELL * SIZE;
    setAttrs(svg, { viewBox: `0 0 ${total} ${total}`, role: "img", "aria-label": "Brandubh board" });
    svg.addEventListener("pointerdown", (e) => this.pointerDown(e));
    svg.addEventListener("pointermove", (e) => this.pointerMove(e));
    svg.addEventListener("pointerup", (e) => this.pointerUp(e));
    svg.addEventListener("pointercancel", () => this.cancelDrag());
  }

  // state: {board, legal, last_move, captured, your_turn, analysis}
  show(state) {
    this.state = state;
    this.selected = null;
    this.drag = null;
    this.draw();
  }

  legalFrom(from) {
    if (!this.state || !this.state.your_turn) return [];
    return this.state.legal.filter((m) => m.startsWith(from + "-")).map((m) => m.split("-")[1]);
  }

  draw() {
    const s = this.state;
    const svg = this.svg;
    svg.replaceChildren();
    const total = MARGIN * 2 + CELL * SIZE;
    svg.append(svgEl("rect", { x: 0, y: 0, width: total, height: total, class: "frame" }));
    const last = s && s.last_move ? s.last_move.split("-") : null;
    const captured = new Set(s ? s.captured : []);
    const capturedBefore = new Set(s ? s.captured_before : []);
    for (let i = 0; i < 49; i++) {
      const [x, y] = cellXY(i);
      const name = squareName(i);
      let cls = "sq";
      if (RESTRICTED.has(i)) cls += i === 24 ? " castle" : " corner";
      if (last && (name === last[0] || name === last[1])) cls += name === last[1] ? " last-to" : " last-from";
      if (this.selected === name) cls += " selected";
      svg.append(svgEl("rect", { x, y, width: CELL, height: CELL, class: cls, "data-square": name }));
      if (RESTRICTED.has(i)) {
        // A cross marks the Castle and the corners (restricted squares, rule 3).
        const p = 14;
        svg.append(svgEl("path", {
          d: `M${x + p} ${y + p} L${x + CELL - p} ${y + CELL - p} M${x + CELL - p} ${y + p} L${x + p} ${y + CELL - p}`,
          class: "mark",
        }));
      }
    }
    for (let k = 0; k < SIZE; k++) {
      const fx = MARGIN + k * CELL + CELL / 2;
      svg.append(svgEl("text", { x: fx, y: MARGIN - 9, class: "label" }, FILES[k]));
      svg.append(svgEl("text", { x: fx, y: MARGIN + SIZE * CELL + 21, class: "label" }, FILES[k]));
      const ry = MARGIN + (SIZE - 1 - k) * CELL + CELL / 2 + 5;
      svg.append(svgEl("text", { x: MARGIN / 2, y: ry, class: "label" }, String(k + 1)));
      svg.append(svgEl("text", { x: MARGIN + SIZE * CELL + MARGIN / 2, y: ry, class: "label" }, String(k + 1)));
    }
    if (!s) return;
    for (const name of capturedBefore) {
      if (captured.has(name)) continue;
      const [cx, cy] = cellCentre(squareIndex(name));
      svg.append(svgEl("circle", { cx, cy, r: CELL * 0.36, class: "captured before", "data-captured-before": name }));
    }
    for (const name of captured) {
      const [cx, cy] = cellCentre(squareIndex(name));
      svg.append(svgEl("circle", { cx, cy, r: CELL * 0.36, class: "captured", "data-captured": name }));
      const d = CELL * 0.2;
      svg.append(svgEl("path", {
        d: `M${cx - d} ${cy - d} L${cx + d} ${cy + d} M${cx + d} ${cy - d} L${cx - d} ${cy + d}`,
        class: "captured-x",
      }));
    }
    for (let i = 0; i < 49; i++) {
      const letter = s.board[i];
      if (letter === ".") continue;
      svg.append(this.piece(letter, i, letter === "K" && captured.has(squareName(i))));
    }
    if (s.analysis && s.analysis.ply === s.ply) this.drawArrows(s.analysis);
    if (this.selected) {
      for (const to of this.legalFrom(this.selected)) {
        const [cx, cy] = cellCentre(squareIndex(to));
        svg.append(svgEl("circle", { cx, cy, r: 9, class: "dest", "data-dest": to }));
      }
    }
  }

  // A piece; a captured King (the game's last move took it, rule 7) stays on its square,
  // greyed and struck through in red.
  piece(letter, index, captured) {
    const [cx, cy] = cellCentre(index);
    const name = squareName(index);
    const g = svgEl("g", { class: `piece piece-${letter}` + (captured ? " captured-king" : ""), "data-piece": letter,
      "data-at": name, "data-captured-king": captured ? name : null, transform: `translate(${cx} ${cy})` });
    g.append(svgEl("circle", { r: CELL * 0.36 }));
    if (letter === "K") {
      g.append(svgEl("path", { d: "M-11 6 L-13 -8 L-6 -2 L0 -12 L6 -2 L13 -8 L11 6 Z", class: "crown" }));
    }
    if (captured) {
      const d = CELL * 0.3;
      g.append(svgEl("path", { d: `M${-d} ${-d} L${d} ${d} M${d} ${-d} L${-d} ${d}`, class: "king-x" }));
      g.append(svgEl("title", {}, "the King, captured"));
    }
    return g;
  }

  // Top moves of an analysis as arrows, numbered by rank (1 = the agent's choice).
  drawArrows(a) {
    const maxVisits = Math.max(1, ...a.top.map((m) => m.visits));
    a.top.slice(0, 3).forEach((m, k) => {
      const [from, to] = m.move.split("-");
      const [x1, y1] = cellCentre(squareIndex(from));
      const [x2, y2] = cellCentre(squareIndex(to));
      const len = Math.hypot(x2 - x1, y2 - y1);
      const ux = (x2 - x1) / len, uy = (y2 - y1) / len;
      const w = 4 + 8 * (m.visits / maxVisits);
      const hx = x2 - ux * 20, hy = y2 - uy * 20;
      const g = svgEl("g", { class: `arrow arrow-${k + 1}`, "data-arrow": m.move });
      g.append(svgEl("line", { x1: x1 + ux * 16, y1: y1 + uy * 16, x2: hx, y2: hy, "stroke-width": w }));
      const px = -uy * 11, py = ux * 11;
      g.append(svgEl("path", { d: `M${x2} ${y2} L${hx + px} ${hy + py} L${hx - px} ${hy - py} Z` }));
      g.append(svgEl("text", { x: (x1 + x2) / 2 + px * 1.3, y: (y1 + y2) / 2 + py * 1.3 + 5 }, String(k + 1)));
      this.svg.append(g);
    });
  }

  squareAt(event) {
    const pt = this.svg.createSVGPoint();
    pt.x = event.clientX;
    pt.y = event.clientY;
    const p = pt.matrixTransform(this.svg.getScreenCTM().inverse());
    const f = Math.floor((p.x - MARGIN) / CELL);
    const r = SIZE - 1 - Math.floor((p.y - MARGIN) / CELL);
    if (f < 0 || f >= SIZE || r < 0 || r >= SIZE) return null;
    return squareName(r * SIZE + f);
  }

  pointerDown(e) {
    const sq = this.squareAt(e);
    if (!sq || !this.state || !this.state.your_turn) return;
    if (this.selected && this.legalFrom(this.selected).includes(sq)) {
      const from = this.selected;
      this.selected = null;
      this.onMove(`${from}-${sq}`);
      return;
    }
    if (this.legalFrom(sq).length > 0) {
      this.selected = sq;
      this.draw();
      const node = this.svg.querySelector(`[data-at="${sq}"]`);
      if (node) {
        this.drag = { from: sq, node, moved: false, x: e.clientX, y: e.clientY };
        this.svg.setPointerCapture(e.pointerId);
      }
    } else if (this.selected) {
      this.selected = null;
      this.draw();
    }
  }

  pointerMove(e) {
    if (!this.drag) return;
    if (Math.hypot(e.clientX - this.drag.x, e.clientY - this.drag.y) > 4) this.drag.moved = true;
    if (!this.drag.moved) return;
    const pt = this.svg.createSVGPoint();
    pt.x = e.clientX;
    pt.y = e.clientY;
    const p = pt.matrixTransform(this.svg.getScreenCTM().inverse());
    this.drag.node.setAttribute("transform", `translate(${p.x} ${p.y})`);
    this.drag.node.classList.add("dragging");
    this.svg.append(this.drag.node);
  }

  pointerUp(e) {
    const drag = this.drag;
    this.drag = null;
    if (!drag || !drag.moved) return;
    const sq = this.squareAt(e);
    if (sq && this.legalFrom(drag.from).includes(sq)) {
      this.selected = null;
      this.onMove(`${drag.from}-${sq}`);
    } else {
      this.draw();
    }
  }

  cancelDrag() {
    if (this.drag) {
      this.drag = null;
      this.draw();
    }
  }
}
