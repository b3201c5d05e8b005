// Shared helpers of the Play and Run pages. No server text is ever inserted as HTML:
// everything goes through textContent or attributes.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";

// An HTML element: el("div", {class: "x"}, "text", child, ...).
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  setAttrs(e, attrs);
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// An SVG element.
function svgEl(tag, attrs, text) {
  const e = document.createElementNS(SVG_NS, tag);
  setAttrs(e, attrs);
  if (text !== undefined) e.textContent = String(text);
  return e;
}

function setAttrs(e, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : String(v));
  }
}

// Calls the JSON API; a failure throws an Error whose message is the server's one line.
// A POST always carries a JSON body (the server refuses any other).
async function api(method, path, body) {
  const opts = { method, headers: {} };
  if (body === undefined && method === "POST") body = {};
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, opts);
  } catch (e) {
    throw new Error("the server cannot be reached (is brandubh serve still running?)");
  }
  let data = null;
  try {
    data = await res.json();
  } catch (e) {
    throw new Error(`the server answered ${res.status} without JSON`);
  }
  if (!res.ok) {
    throw new Error(data && data.error ? data.error : `the server answered ${res.status}`);
  }
  return data;
}

// Fills the navigation bar with the Play link and one link per run.
function fillNav(info, current) {
  const nav = document.getElementById("nav");
  nav.replaceChildren();
  nav.append(el("a", { href: "/", class: current === "play" ? "current" : null }, "Play"));
  for (const r of info.runs) {
    nav.append(el("a", { href: `/run?run=${r.index}`, class: current === `run${r.index}` ? "current" : null },
      `Run: ${r.name}`));
  }
}

function fmt(x, digits) {
  if (x === null || x === undefined || Number.isNaN(x)) return "–";
  return Number(x).toFixed(digits);
}
