// memphase's HTML report: everything it needs is in #data; no network.
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
const CLS = ["anon", "file", "shmem", "swap"];
const CCOL = { anon: "#e4572e", file: "#76b041", shmem: "#17bebb", swap: "#a06cd5" };
const W = 1000, H = 260, PAD = 50;
const sel = { phase: null, from: null, to: null };
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;",
	">": "&gt;", '"': "&quot;" }[c]));
function fmt(b) {
	const u = ["B", "KiB", "MiB", "GiB", "TiB"];
	let i = 0;
	while (Math.abs(b) >= 1024 && i < u.length - 1) { b /= 1024; i++; }
	return (i ? b.toFixed(1) : b) + " " + u[i];
}
function phaseColor(id) { return "hsl(" + ((id * 67) % 360) + ",70%,55%)"; }
const svgNS = "http://www.w3.org/2000/svg";
function el(tag, attrs, parent) {
	const e = document.createElementNS(svgNS, tag);
	for (const k in attrs) e.setAttribute(k, attrs[k]);
	if (parent) parent.appendChild(e);
	return e;
}

// ---- the chart: RSS per class over time, phase bands, limits, OOM kills ----
const end = Math.max(D.duration_s, 1e-6);
const tl = D.timeline;
let ymax = 1;
for (const s of tl) ymax = Math.max(ymax, s[1] + s[2] + s[3] + s[4]);
if (D.limit) ymax = Math.max(ymax, D.limit);
ymax *= 1.05;
const X = (t) => PAD + (t / end) * (W - PAD - 10);
const Y = (v) => H - 20 - (v / ymax) * (H - 30);
const T = (x) => Math.min(end, Math.max(0, ((x - PAD) / (W - PAD - 10)) * end));
function drawChart() {
	const svg = document.getElementById("chart");
	svg.setAttribute("viewBox", "0 0 " + W + " " + H);
	for (const p of D.phases)
		for (const iv of p.intervals) {
			const r = el("rect", { class: "band", x: X(iv[0]), y: 10,
				width: Math.max(1, X(iv[1]) - X(iv[0])), height: H - 30,
				fill: phaseColor(p.id), opacity: 0.18, "data-phase": p.name }, svg);
			el("title", {}, r).textContent = p.name + ": " + iv[0].toFixed(3) + "-" +
				iv[1].toFixed(3) + " s";
			r.addEventListener("click", (ev) => { ev.stopPropagation(); selectPhase(p.name); });
			if (X(iv[1]) - X(iv[0]) > 40)
				el("text", { x: X(iv[0]) + 3, y: H - 24, "font-size": 10, fill: "#333",
					"pointer-events": "none" }, svg).textContent = p.name;
		}
	// stacked areas, anon at the bottom
	let base = tl.map(() => 0);
	for (let c = 0; c < CLS.length; c++) {
		if (!tl.some((s) => s[c + 1] > 0)) continue;
		const top = tl.map((s, i) => base[i] + s[c + 1]);
		let d = "M" + tl.map((s, i) => X(s[0]) + "," + Y(top[i])).join("L");
		for (let i = tl.length - 1; i >= 0; i--) d += "L" + X(tl[i][0]) + "," + Y(base[i]);
		el("path", { d: d + "Z", fill: CCOL[CLS[c]], opacity: 0.75, "pointer-events": "none" },
		   svg);
		base = top;
	}
	if (D.limit) {
		el("line", { x1: PAD, x2: W - 10, y1: Y(D.limit), y2: Y(D.limit), stroke: "#c00",
			"stroke-dasharray": "6 3" }, svg);
		el("text", { x: W - 12, y: Y(D.limit) - 3, "text-anchor": "end", fill: "#c00",
			"font-size": 11 }, svg).textContent = "cgroup limit " + fmt(D.limit);
	}
	for (const o of D.ooms) {
		el("line", { x1: X(o.t), x2: X(o.t), y1: 10, y2: H - 20, stroke: "#c00",
			"stroke-width": 2 }, svg);
		el("text", { x: X(o.t) - 3, y: 22, "text-anchor": "end", fill: "#c00",
			"font-size": 11, class: "oom" }, svg).textContent = "OOM kill: " + o.comm;
	}
	for (let i = 0; i <= 4; i++) {
		el("text", { x: PAD - 4, y: Y((ymax / 1.05) * i / 4) + 4, "text-anchor": "end",
			"font-size": 10 }, svg).textContent = fmt(Math.round((ymax / 1.05) * i / 4));
		el("text", { x: X((end * i) / 4), y: H - 5, "text-anchor": "middle", "font-size": 10 },
		   svg).textContent = ((end * i) / 4).toFixed(2) + " s";
	}
	const box = el("rect", { id: "range", y: 10, height: H - 30, fill: "#333", opacity: 0.15,
		width: 0, "pointer-events": "none" }, svg);
	let x0 = null;
	const px = (ev) => { const r = svg.getBoundingClientRect();
		return ((ev.clientX - r.left) / r.width) * W; };
	svg.addEventListener("mousedown", (ev) => { x0 = px(ev); });
	svg.addEventListener("mousemove", (ev) => {
		if (x0 === null) return;
		const x1 = px(ev);
		box.setAttribute("x", Math.min(x0, x1));
		box.setAttribute("width", Math.abs(x1 - x0));
	});
	window.addEventListener("mouseup", (ev) => {
		if (x0 === null) return;
		const x1 = px(ev), a = T(Math.min(x0, x1)), b = T(Math.max(x0, x1));
		x0 = null;
		if (b - a > end / 500) selectRange(a, b);
	});
	const lg = document.getElementById("legend");
	for (const c of CLS)
		lg.insertAdjacentHTML("beforeend", '<span style="background:' + CCOL[c] + '"></span>' + c);
}

// ---- the per-phase table ----
function drawTable() {
	const tb = document.querySelector("#phases tbody");
	for (const p of D.phases) {
		const tr = document.createElement("tr");
		tr.className = "row";
		tr.dataset.phase = p.name;
		tr.innerHTML = "<td>" + esc(p.name) + "</td><td>" + p.time_s.toFixed(3) + " s</td><td>" +
			p.calls + "</td>" + CLS.map((c) => "<td>" + fmt(p.growth[c]) + "</td>").join("") +
			"<td>" + fmt(p.sampled_bytes) + "</td>";
		tr.addEventListener("click", () => selectPhase(p.name));
		tb.appendChild(tr);
	}
}

// ---- the flame graph of the selected growth ----
let zoom = null;
function buildTree() {
	const root = { name: "all", bytes: 0, kids: new Map() };
	const pid = sel.phase === null ? null : D.phase_names.indexOf(sel.phase);
	const S = D.samples;
	for (let i = 0; i < S.length; i += 3) {
		const t = S[i] / 1000, st = D.stacks[S[i + 1]], w = S[i + 2];
		if (pid !== null && st[0] !== pid) continue;
		if (sel.from !== null && (t < sel.from || t > sel.to)) continue;
		let n = root;
		n.bytes += w;
		const path = [D.strings[st[1]]].concat(st[2].map((f) => D.strings[f]));
		for (const name of path) {
			let k = n.kids.get(name);
			if (!k) { k = { name: name, bytes: 0, kids: new Map(), parent: n }; n.kids.set(name, k); }
			k.bytes += w;
			n = k;
		}
	}
	return root;
}
function drawFlame() {
	const tree = buildTree();
	const top = zoom && zoom.path ? findPath(tree, zoom.path) || tree : tree;
	const box = document.getElementById("flame");
	box.innerHTML = "";
	const total = document.getElementById("flame-total");
	total.dataset.bytes = tree.bytes;
	total.textContent = fmt(tree.bytes) + " sampled" + (sel.phase !== null ? " in " + sel.phase :
		sel.from !== null ? " from " + sel.from.toFixed(3) + " to " + sel.to.toFixed(3) + " s" :
		" in the whole run");
	const width = box.clientWidth || 1000, q = document.getElementById("search").value;
	let depth = 0, hits = 0;
	function lay(n, x, w, d) {
		if (w < 0.5) return;
		depth = Math.max(depth, d);
		const div = document.createElement("div");
		div.className = "fn";
		const share = tree.bytes ? (100 * n.bytes / tree.bytes).toFixed(1) : "0";
		div.style.cssText = "left:" + x + "px;width:" + w + "px;top:" + d * 17 + "px;background:hsl(" +
			(20 + (hash(n.name) % 40)) + ",80%," + (60 + (hash(n.name) % 15)) + "%)";
		div.textContent = n.name;
		div.title = n.name + "\n" + fmt(n.bytes) + " (" + share + "% of the selection)";
		if (q && n.name.includes(q)) { div.classList.add("hit"); hits += n.bytes; }
		div.addEventListener("click", () => { zoom = { path: pathOf(n) }; drawFlame(); });
		div.addEventListener("mousemove", () => { document.getElementById("tip").textContent =
			n.name + ": " + fmt(n.bytes) + " (" + share + "%)"; });
		box.appendChild(div);
		let cx = x;
		const kids = [...n.kids.values()].sort((a, b) => b.bytes - a.bytes);
		for (const k of kids) {
			const kw = n.bytes ? (w * k.bytes) / n.bytes : 0;
			lay(k, cx, kw, d + 1);
			cx += kw;
		}
	}
	lay(top, 0, width, 0);
	box.style.height = (depth + 1) * 17 + 4 + "px";
	document.getElementById("matched").textContent = q ? "matched " + fmt(hits) : "";
}
function hash(s) { let h = 0; for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) >>> 0; return h; }
function pathOf(n) { const p = []; while (n && n.parent) { p.unshift(n.name); n = n.parent; } return p; }
function findPath(t, p) { let n = t; for (const k of p) { n = n.kids.get(k); if (!n) return null; } return n; }

function selectPhase(name) {
	sel.phase = name; sel.from = sel.to = null; zoom = null;
	document.getElementById("range").setAttribute("width", 0);
	for (const tr of document.querySelectorAll("tr.row"))
		tr.classList.toggle("sel", tr.dataset.phase === name);
	drawFlame();
}
function selectRange(a, b) {
	sel.phase = null; sel.from = a; sel.to = b; zoom = null;
	for (const tr of document.querySelectorAll("tr.row")) tr.classList.remove("sel");
	drawFlame();
}
document.getElementById("all").addEventListener("click", () => {
	sel.phase = sel.from = sel.to = null; zoom = null;
	document.getElementById("range").setAttribute("width", 0);
	for (const tr of document.querySelectorAll("tr.row")) tr.classList.remove("sel");
	drawFlame();
});
document.getElementById("unzoom").addEventListener("click", () => { zoom = null; drawFlame(); });
document.getElementById("search").addEventListener("input", drawFlame);
document.getElementById("title").textContent = D.title;
drawChart();
drawTable();
drawFlame();
performance.mark("memphase-drawn");
