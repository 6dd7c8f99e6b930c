// The web view of a recording of gtrace class or gtrace flow. It reads
// trace.json, the recording in the Chrome Trace Event format
// (calltrace/doc.go), back into tracks of nested calls, and shows the
// tracks, the selected track's timeline and call tree, and the struct's
// fields at the selected call. See webview/doc.go.
"use strict";

const state = {
  rec: null, // {command, struct, fields, tracks}
  track: null, // the selected track
  call: null, // the selected call
  collapsed: new Set(), // the calls whose inner calls are hidden
  zoom: null, // the call whose time the timeline spans, or null for the track's
  rows: new Map(), // each call's row in the tree
  bars: new Map(), // each call's bar in the timeline
  // How many rows the lists draw; a button at their end draws more.
  limits: { tracks: 0, tree: 0 },
};

// rowStep is how many rows the lists draw at first, and more at each
// click: tens of thousands of rows would make every redraw slow.
const rowStep = 1000;

const $ = (id) => document.getElementById(id);

// el makes an element: attrs are attributes, "class", "style" (an
// object) or "on..." listeners; children are nodes or text.
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "style") Object.assign(e.style, v);
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  e.append(...children.map((c) => (c instanceof Node ? c : String(c))));
  return e;
}

// parse turns the Chrome Trace file back into tracks. Times become ns
// from the recording's start. A track's steps are its calls in order of
// entry, each with the step before it, to tell which fields changed.
function parse(file) {
  const other = file.otherData || {};
  const rec = { command: other.command || "", struct: other.struct || "", fields: other.fields || [], tracks: [] };
  const tracks = new Map();
  const open = new Map(); // per lane, the calls entered and not yet returned
  const track = (pid) => {
    if (!tracks.has(pid)) {
      tracks.set(pid, { id: pid, name: "track " + pid, calls: [], steps: [], threads: new Map() });
    }
    return tracks.get(pid);
  };
  const ns = (us) => Math.round(us * 1000);
  for (const e of file.traceEvents || []) {
    const t = track(e.pid);
    const args = e.args || {};
    if (e.ph === "M") {
      if (e.name === "process_name") t.name = args.name;
      if (e.name === "thread_name") t.threads.set(e.tid, args.name);
      continue;
    }
    const lane = e.pid + " " + e.tid;
    if (!open.has(lane)) open.set(lane, []);
    const stack = open.get(lane);
    if (e.ph === "B") {
      const values = args.fields || {};
      const c = {
        func: e.name, entry: ns(e.ts), exit: null, end: ns(e.ts), depth: stack.length,
        cpu: args.cpu, pid: args.pid, tid: e.tid, comm: args.comm || "",
        fields: rec.fields.map((f) => values[f] ?? ""), calls: [], prev: t.steps.at(-1) || null,
      };
      (stack.length ? stack.at(-1).calls : t.calls).push(c);
      t.steps.push(c);
      stack.push(c);
    } else if (e.ph === "E" && stack.length) {
      const c = stack.pop();
      c.end = ns(e.ts);
      if (!args.unfinished) c.exit = c.end;
    }
  }
  for (const t of tracks.values()) {
    if (t.steps.length === 0) continue;
    t.first = t.steps[0].entry;
    t.last = t.steps.reduce((last, c) => Math.max(last, c.end), 0);
    rec.tracks.push(t);
  }
  rec.tracks.sort((a, b) => a.id - b.id);
  return rec;
}

// duration prints ns as uftrace does: us, ms or s, three decimals.
function duration(ns) {
  if (ns < 1e6) return (ns / 1e3).toFixed(3) + " us";
  if (ns < 1e9) return (ns / 1e6).toFixed(3) + " ms";
  return (ns / 1e9).toFixed(3) + " s";
}

// changed lists the indexes of the fields that differ from the step
// before.
function changed(c) {
  if (!c.prev) return [];
  return c.fields.flatMap((v, i) => (v !== c.prev.fields[i] ? [i] : []));
}

function filters() {
  return { cpu: $("cpu").value, pid: $("pid").value, func: $("func").value, search: $("search").value.trim().toLowerCase() };
}

// passes says whether c ran where the CPU, pid and function filters ask.
function passes(c, f) {
  return (f.cpu === "" || String(c.cpu) === f.cpu) &&
    (f.pid === "" || String(c.pid) === f.pid) &&
    (f.func === "" || c.func === f.func);
}

// hit says whether the search finds c: in its function or a field.
function hit(c, f) {
  return f.search !== "" &&
    (c.func.toLowerCase().includes(f.search) || c.fields.some((v) => v.toLowerCase().includes(f.search)));
}

// shown says whether t has a call that passes the filters and, unless
// the search finds t's name, that the search finds.
function shown(t, f) {
  const named = f.search === "" || t.name.toLowerCase().includes(f.search);
  return t.steps.some((c) => passes(c, f) && (named || hit(c, f)));
}

// fillFilters offers the CPUs, pids and functions of the recording.
function fillFilters() {
  const cpus = new Set(), pids = new Map(), funcs = new Set();
  for (const t of state.rec.tracks) {
    for (const c of t.steps) {
      cpus.add(c.cpu);
      if (!pids.has(c.pid)) pids.set(c.pid, c.comm);
      funcs.add(c.func);
    }
  }
  const byNumber = (a, b) => a - b;
  for (const cpu of [...cpus].sort(byNumber)) $("cpu").append(el("option", { value: cpu }, cpu));
  for (const pid of [...pids.keys()].sort(byNumber)) $("pid").append(el("option", { value: pid }, `${pid} ${pids.get(pid)}`));
  for (const fn of [...funcs].sort()) $("func").append(el("option", { value: fn }, fn));
}

function showTracks() {
  const f = filters();
  const tracks = state.rec.tracks.filter((t) => shown(t, f));
  const rows = tracks.slice(0, state.limits.tracks).map((t) =>
    el("tr", { class: "track" + (t === state.track ? " selected" : ""), "data-id": t.id, onclick: () => selectTrack(t) },
      el("td", { class: "name" }, t.name),
      el("td", { class: "num" }, t.steps.length),
      el("td", { class: "num" }, duration(t.last - t.first))));
  $("tracks").tBodies[0].replaceChildren(...rows, ...more(tracks.length, "tracks", 3, showTracks));
  const kind = state.rec.command === "flow" ? "threads" : "objects";
  $("status").textContent = `${tracks.length} of ${state.rec.tracks.length} ${kind}`;
}

// more is the last row of a list that draws only its first rows: a
// button that draws more, and then calls redraw.
function more(total, list, columns, redraw) {
  const rest = total - state.limits[list];
  if (rest <= 0) return [];
  const button = el("button", {
    onclick: (ev) => {
      ev.stopPropagation();
      state.limits[list] += rowStep;
      redraw();
    },
  }, `draw ${Math.min(rest, rowStep)} more of ${rest}`);
  return [el("tr", { class: "more" }, el("td", { colspan: columns }, button))];
}

// showTimeline draws a lane per thread of the track, its calls as bars
// as long as they took, stacked by depth, over the track's time or, when
// zoomed, the time of one call. A double click on a bar zooms to it, one
// elsewhere zooms out.
function showTimeline() {
  const t = state.track;
  const from = state.zoom ? state.zoom.entry : t.first;
  const span = Math.max((state.zoom ? state.zoom.end : t.last) - from, 1);
  const lanes = new Map();
  for (const c of t.steps) {
    if (!lanes.has(c.tid)) lanes.set(c.tid, []);
    lanes.get(c.tid).push(c);
  }
  const barHeight = 16;
  const minWidth = 0.3; // in % of the lane: a bar is at least this wide
  state.bars.clear();
  const rows = [...lanes].map(([tid, calls]) => {
    const depth = calls.reduce((d, c) => Math.max(d, c.depth + 1), 0);
    // Calls too short to see would pile up on each other by the
    // thousand: a bar is drawn only where the last one drawn at its
    // depth has ended.
    const drawnTo = [];
    const drawn = calls.filter((c) => {
      const left = ((c.entry - from) / span) * 100;
      if (c.end < from || left > 100 || left < (drawnTo[c.depth] ?? -Infinity)) return false;
      drawnTo[c.depth] = left + Math.max(((c.end - c.entry) / span) * 100, minWidth);
      return true;
    });
    const bars = drawn.map((c) => {
      const bar = el("div", {
        class: "bar" + (c === state.call ? " selected" : ""),
        title: `${c.func} ${c.exit === null ? "(return not seen)" : duration(c.exit - c.entry)}`,
        style: {
          left: ((c.entry - from) / span) * 100 + "%",
          width: Math.max(((c.end - c.entry) / span) * 100, minWidth) + "%",
          top: c.depth * barHeight + "px",
          background: color(c.func),
        },
        onclick: () => selectCall(c),
        ondblclick: (ev) => {
          ev.stopPropagation();
          state.zoom = state.call = c;
          showAll();
        },
      }, c.func);
      state.bars.set(c, bar);
      return bar;
    });
    return el("div", { class: "lane", "data-tid": tid },
      el("div", { class: "label" }, t.threads.get(tid) || "tid " + tid),
      el("div", { class: "bars", style: { height: depth * barHeight + "px" } }, ...bars));
  });
  const scale = state.zoom
    ? `${state.zoom.func}: ${duration(span)}; double-click elsewhere to zoom out`
    : `the whole track: ${duration(span)}; double-click a bar to zoom`;
  $("timeline").replaceChildren(el("div", { class: "scale" }, scale), ...rows);
}

// color is a warm color from a hash of name, so that a function keeps
// its color.
function color(name) {
  let h = 0;
  for (const ch of name) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return `hsl(${20 + (h % 40)}, 85%, ${62 + (h % 17)}%)`;
}

// showTree lists the track's calls nested, as uftrace's replay does.
function showTree() {
  const t = state.track;
  const f = filters();
  const calls = [];
  const unfolded = (c) => {
    calls.push(c);
    if (!state.collapsed.has(c)) c.calls.forEach(unfolded);
  };
  t.calls.forEach(unfolded);
  state.rows.clear();
  const rows = calls.slice(0, state.limits.tree).map((c) => {
    const classes = ["call"];
    if (!passes(c, f)) classes.push("dim");
    if (hit(c, f)) classes.push("hit");
    if (changed(c).length) classes.push("changed");
    if (c === state.call) classes.push("selected");
    const folded = state.collapsed.has(c);
    const toggle = el("span", { class: "toggle" }, c.calls.length ? (folded ? "\u25b8" : "\u25be") : "");
    if (c.calls.length) {
      toggle.addEventListener("click", (ev) => {
        ev.stopPropagation();
        if (folded) state.collapsed.delete(c);
        else state.collapsed.add(c);
        showTree();
      });
    }
    const row = el("tr", { class: classes.join(" "), "data-depth": c.depth, onclick: () => selectCall(c) },
      el("td", { class: "num" }, ((c.entry - t.first) / 1e3).toFixed(3)),
      el("td", { class: "num cpu" }, c.cpu),
      el("td", {}, `${c.comm} ${c.pid}/${c.tid}`),
      el("td", { class: "num dur" }, c.exit === null ? "-" : duration(c.exit - c.entry)),
      el("td", { class: "func", style: { paddingLeft: 0.3 + 1.5 * c.depth + "em" } }, toggle, c.func));
    state.rows.set(c, row);
    return row;
  });
  $("tree").tBodies[0].replaceChildren(...rows, ...more(calls.length, "tree", 5, showTree));
}

// showDetails shows where the selected call ran and the fields at its
// entry, beside those of the step before; changed ones are highlighted.
function showDetails() {
  const c = state.call;
  if (!c) {
    $("details").replaceChildren(el("p", { class: "hint" }, "Select a call to see where it ran and the fields at its entry."));
    return;
  }
  const row = (name, value) => el("tr", {}, el("th", {}, name), el("td", {}, value));
  const parts = [
    el("h3", {}, c.func),
    el("table", {},
      row("entry", ((c.entry - state.track.first) / 1e3).toFixed(3) + " us"),
      row("duration", c.exit === null ? "- (return not seen)" : duration(c.exit - c.entry)),
      row("CPU", c.cpu), row("comm", c.comm), row("pid", c.pid), row("tid", c.tid)),
  ];
  if (state.rec.fields.length) {
    const diff = new Set(changed(c));
    const rows = state.rec.fields.map((name, i) =>
      el("tr", { class: diff.has(i) ? "changed" : "", "data-field": name },
        el("td", {}, name), el("td", {}, c.fields[i]), el("td", {}, c.prev ? c.prev.fields[i] : "")));
    parts.push(
      el("h3", {}, `struct ${state.rec.struct} at entry`),
      el("table", { id: "fields" },
        el("thead", {}, el("tr", {}, el("th", {}, "field"), el("th", {}, "value"), el("th", {}, "step before"))),
        el("tbody", {}, ...rows)));
  }
  $("details").replaceChildren(...parts);
}

function selectTrack(t) {
  state.track = t;
  state.call = null;
  state.collapsed.clear();
  state.zoom = null;
  state.limits.tree = rowStep;
  $("track-name").textContent = `${t.name}: ${t.steps.length} calls, ${duration(t.last - t.first)}`;
  showAll();
}

// selectCall moves the selection to c: it only marks its row and bar,
// which keeps it quick on a large track.
function selectCall(c) {
  for (const drawn of [state.rows, state.bars]) {
    drawn.get(state.call)?.classList.remove("selected");
    drawn.get(c)?.classList.add("selected");
  }
  state.call = c;
  showDetails();
}

function showAll() {
  showTracks();
  if (state.track) {
    showTimeline();
    showTree();
  }
  showDetails();
}

async function main() {
  try {
    const resp = await fetch("trace.json");
    if (!resp.ok) throw new Error(`trace.json: ${resp.status} ${resp.statusText}`);
    state.rec = parse(await resp.json());
  } catch (err) {
    $("track-name").textContent = "Cannot read the recording: " + err.message;
    return;
  }
  const what = [state.rec.command, state.rec.struct].filter((s) => s).join(" ");
  $("title").textContent = document.title = "gtrace " + what;
  $("kind").textContent = state.rec.command === "flow" ? "thread" : "object";
  state.limits.tracks = rowStep;
  fillFilters();
  for (const id of ["cpu", "pid", "func"]) $(id).addEventListener("change", showAll);
  $("search").addEventListener("input", showAll);
  $("timeline").addEventListener("dblclick", () => {
    state.zoom = null;
    showAll();
  });
  showAll();
  document.body.dataset.loaded = "true";
}

main();
