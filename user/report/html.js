// memphase's HTML report: everything it needs is in #data; no network.
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
const CLS = ["anon", "file", "shmem", "swap"];
const CCOL = { anon: "#e4572e", file: "#76b041", shmem: "#17bebb", swap: "#a06cd5" };
const W = 1000, H = 260, PAD = 62;
const REQ = D.requests || [];
// the plot's top: below the row of requests when there are any
const TOP = REQ.length ? 26 : 10;
const sel = { phase: null, from: null, to: null, req: null };
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;",
	">": "&gt;", '"': "&quot;" }[c]));
function sfmt(b) { return (b > 0 ? "+" : "") + fmt(b); }
function fmt(b) {
	const u = ["B", "KiB", "MiB", "GiB", "TiB"];
	let i = 0;
	while (Math.abs(b) >= 1024 && i < u.length - 1) { b /= 1024; i++; }
	// whole numbers without decimals (a tick at 64 MiB reads "64 MiB")
	return (i ? (Number.isInteger(b) ? String(b) : b.toFixed(1)) : b) + " " + u[i];
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
if (D.peak_total) ymax = Math.max(ymax, D.peak_total);
// a step for about n ticks up to max: a power of two (bytes: 256 MiB, 1 GiB) or 1, 2 or 5
// times a power of ten (seconds)
function niceStep(max, n, base) {
	const raw = Math.max(max / n, 1e-9);
	if (base === 1024)
		return Math.pow(2, Math.ceil(Math.log2(Math.max(raw, 1))));
	const unit = Math.pow(10, Math.floor(Math.log10(raw)));
	for (const k of [1, 2, 5])
		if (unit * k >= raw) return unit * k;
	return unit * 10;
}
const ystep = niceStep(ymax, 4, 1024);
ymax = Math.ceil((ymax * 1.02) / ystep) * ystep;
const X = (t) => PAD + (t / end) * (W - PAD - 10);
const Y = (v) => H - 20 - (v / ymax) * (H - 20 - TOP);
const T = (x) => Math.min(end, Math.max(0, ((x - PAD) / (W - PAD - 10)) * end));
function drawChart() {
	const svg = document.getElementById("chart");
	svg.setAttribute("viewBox", "0 0 " + W + " " + H);
	for (const p of D.phases)
		for (const iv of p.intervals) {
			const r = el("rect", { class: "band", x: X(iv.start_s), y: TOP,
				width: Math.max(1, X(iv.end_s) - X(iv.start_s)), height: H - 20 - TOP,
				fill: phaseColor(p.id), opacity: 0.18, "data-phase": p.name }, svg);
			el("title", {}, r).textContent = p.name + ": " + iv.start_s.toFixed(3) + "-" +
				iv.end_s.toFixed(3) + " s";
			r.addEventListener("click", (ev) => { ev.stopPropagation(); selectPhase(p.name); });
			if (X(iv.end_s) - X(iv.start_s) > 40)
				el("text", { x: X(iv.start_s) + 3, y: H - 24, "font-size": 10, fill: "#333",
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
		el("line", { x1: X(o.t), x2: X(o.t), y1: TOP, y2: H - 20, stroke: "#c00",
			"stroke-width": 2 }, svg);
		el("text", { x: X(o.t) - 3, y: TOP + 12, "text-anchor": "end", fill: "#c00",
			"font-size": 11, class: "oom" }, svg).textContent = "OOM kill: " + o.comm;
	}
	// the peak, as the summary gives it (the processes together)
	if (D.peak_total) {
		el("line", { class: "peak", x1: PAD, x2: W - 10, y1: Y(D.peak_total),
			y2: Y(D.peak_total), stroke: "#333", "stroke-dasharray": "2 3" }, svg);
		el("text", { class: "peak", x: PAD + 4, y: Y(D.peak_total) - 3, fill: "#333",
			"font-size": 11 }, svg).textContent = "RSS peak " + fmt(D.peak_total);
	}
	// ticks at round values, each with its unit
	for (let v = 0; v <= ymax + ystep / 2; v += ystep)
		el("text", { class: "ytick", x: PAD - 4, y: Y(v) + 4, "text-anchor": "end",
			"font-size": 10 }, svg).textContent = fmt(v);
	const xstep = niceStep(end, 5, 10);
	for (let t = 0; t <= end + xstep / 1000; t += xstep)
		el("text", { class: "xtick", x: X(t), y: H - 5, "text-anchor": "middle",
			"font-size": 10 }, svg).textContent = +t.toFixed(6) + " s";
	drawRequestRow(svg);
	const box = el("rect", { id: "range", y: TOP, height: H - 20 - TOP, fill: "#333", opacity: 0.15,
		width: 0, "pointer-events": "none" }, svg);
	let x0 = null;
	const px = (ev) => svgX(svg, ev);
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

// ---- requests: a row of slices above the plot (the number where it fits), a thin line at
// each start while they are at least 6 px apart ----
// The chart's x of a pointer event (its user units: the border and any scaling taken off).
function svgX(svg, ev) {
	const p = svg.createSVGPoint();
	p.x = ev.clientX;
	p.y = ev.clientY;
	return p.matrixTransform(svg.getScreenCTM().inverse()).x;
}
const reqEnd = (r) => (r.end_s === null ? end : r.end_s);
function drawRequestRow(svg) {
	if (!REQ.length) return;
	const lines = (W - PAD - 10) / REQ.length >= 6;
	el("text", { x: PAD - 4, y: 20, "text-anchor": "end", "font-size": 10 }, svg).textContent =
		"requests";
	// one handler for the row: the request under the pointer, found by its time (slices are
	// under a pixel wide at 1,000 requests)
	const row = el("g", { class: "reqrow" }, svg);
	el("rect", { x: PAD, y: 10, width: W - PAD - 10, height: 12, fill: "transparent" }, row);
	row.addEventListener("mousedown", (ev) => ev.stopPropagation());
	row.addEventListener("click", (ev) => {
		ev.stopPropagation();
		const t = T(svgX(svg, ev));
		let lo = 0, hi = REQ.length - 1;
		while (lo < hi) {
			const mid = (lo + hi + 1) >> 1;
			if (REQ[mid].start_s <= t) lo = mid; else hi = mid - 1;
		}
		const pxs = end / (W - PAD - 10);
		if (REQ[lo].start_s <= t + pxs && reqEnd(REQ[lo]) >= t - pxs) selectRequest(lo + 1);
	});
	REQ.forEach((r, i) => {
		const x0 = X(r.start_s), x1 = X(reqEnd(r)), n = i + 1;
		const g = el("rect", { class: "req", x: x0, y: 10, width: Math.max(1, x1 - x0), height: 12,
			fill: r.oom_killed ? "#c00" : i % 2 ? "#9fa8da" : "#5c6bc0", "data-req": n }, row);
		el("title", {}, g).textContent = "request " + n + ": " + r.start_s.toFixed(3) + "-" +
			reqEnd(r).toFixed(3) + " s, " + sfmt(reqGrowth(r)) + (r.oom_killed ? ", OOM-killed" : "");
		if (x1 - x0 > 7 * String(n).length + 4)
			el("text", { x: x0 + 2, y: 20, "font-size": 9, fill: "#fff",
				"pointer-events": "none" }, row).textContent = n;
		if (lines)
			el("line", { class: "reqline", x1: x0, x2: x0, y1: TOP, y2: H - 20, stroke: "#5c6bc0",
				"stroke-width": 0.6, "pointer-events": "none", "data-req": n }, svg);
	});
}
const reqGrowth = (r) => r.rss_growth_bytes.anon + r.rss_growth_bytes.file +
	r.rss_growth_bytes.shmem;

// ---- the per-request table: the figures of the JSON's requests[] (each cell's data-v) ----
function cell(v, text) {
	return "<td data-v=\"" + esc(v) + "\">" + esc(text) + "</td>";
}
function drawRequests() {
	if (!REQ.length) return;
	document.getElementById("requests-box").hidden = false;
	document.getElementById("requests-n").textContent =
		REQ.length + (REQ.length === 1 ? " request" : " requests");
	const gpu = REQ.some((r) => "pinned_bytes" in r);
	const head = document.querySelector("#requests thead tr");
	if (gpu)
		head.insertAdjacentHTML("beforeend", "<th>pinned</th><th>managed</th><th>VRAM</th>");
	head.insertAdjacentHTML("beforeend", "<th></th>");
	const rows = [];
	REQ.forEach((r, i) => {
		const g = r.rss_growth_bytes, e = reqEnd(r);
		const ph = r.phases.map((p) => p.name + ":" + p.growth_bytes).join(",");
		let h = cell(i + 1, i + 1) + cell(r.start_s, r.start_s.toFixed(3) + " s") +
			cell(r.end_s === null ? "" : r.end_s, (e - r.start_s).toFixed(3) + " s" +
			(r.end_s === null ? " (open)" : "")) +
			cell(r.tokens.prompt, r.tokens.prompt) + cell(r.tokens.generated, r.tokens.generated) +
			CLS.map((c) => cell(g[c], sfmt(g[c]))).join("") +
			cell(ph, r.phases.map((p) => p.name + " " + sfmt(p.growth_bytes)).join(", "));
		if (gpu) {
			// what it kept (allocated less freed), as the summary shows it
			const pin = r.pinned_bytes - r.pinned_freed_bytes;
			const man = r.managed_bytes - r.managed_freed_bytes;
			h += cell(pin, sfmt(pin)) + cell(man, sfmt(man)) +
				cell(r.vram_delta_bytes === null ? "" : r.vram_delta_bytes,
				     r.vram_delta_bytes === null ? "-" : sfmt(r.vram_delta_bytes));
		}
		h += cell(r.oom_killed ? "oom" : "", r.oom_killed ? "OOM-killed" : "");
		rows.push("<tr class=\"rrow" + (r.oom_killed ? " oom" : "") + "\" data-req=\"" + (i + 1) +
			"\">" + h + "</tr>");
	});
	// rows are laid out 200 at a time, more as the box scrolls near their end (or a request
	// further down is selected): 1,000 rows at once would hold up the first frame
	const tb = document.querySelector("#requests tbody"), box = tb.closest(".scroll");
	let shown = 0;
	reqRowsUpTo = (n) => {
		if (n <= shown) return;
		const upto = Math.min(rows.length, Math.max(n, shown + 200));
		tb.insertAdjacentHTML("beforeend", rows.slice(shown, upto).join(""));
		shown = upto;
	};
	reqRowsUpTo(200);
	box.addEventListener("scroll", () => {
		if (box.scrollTop + box.clientHeight > box.scrollHeight - 100) reqRowsUpTo(shown + 200);
	});
	tb.addEventListener("click", (ev) => {
		const tr = ev.target.closest("tr.rrow");
		if (tr) selectRequest(Number(tr.dataset.req));
	});
}
let reqRowsUpTo = () => {};

// ---- where it stops: each bounded cause's ceiling, and the verdict (the summary's lines) ----
function drawCeilings() {
	const c = D.ceilings;
	if (!c) return;
	document.getElementById("ceilings-box").hidden = false;
	document.querySelector("#ceilings tbody").innerHTML = c.causes.map((x) =>
		"<tr>" + cell(x.name, x.name) + cell(x.bytes, fmt(x.bytes)) +
		cell(x.ceiling_bytes === null ? "" : x.ceiling_bytes, x.ceiling_bytes !== null ?
		     fmt(x.ceiling_bytes) : x.state === "unbounded" ? "none" : x.state) +
		cell(x.per_request_bytes === null ? "" : x.per_request_bytes,
		     x.per_request_bytes === null ? "-" : sfmt(x.per_request_bytes)) +
		cell(x.bound_by, x.rule ? x.bound_by : "-") + "</tr>").join("");
	document.getElementById("verdict").innerHTML =
		c.verdict.map((l) => "<li>" + esc(l) + "</li>").join("");
}

// ---- the engine's settings, and where each came from ----
function drawEngine() {
	const e = D.engine;
	if (!e) return;
	document.getElementById("engine-box").hidden = false;
	document.getElementById("engine-h").textContent = "Engine: " + e.program + " (pid " +
		e.pid + "), as it was started";
	const rows = [];
	for (const k in e.settings) {
		const s = e.settings[k];
		if (s.source === "default" && s.value === "") continue;
		const from = s.source === "default" ? (s.from ? "auto" : "default") :
			(s.source === "env" ? "$" : "") + s.from;
		rows.push("<tr>" + cell(k, s.flag || k) + cell(s.value, s.value) + cell(from, from) +
			cell(s.what, s.what) + "</tr>");
	}
	document.querySelector("#engine tbody").innerHTML = rows.join("");
	document.getElementById("engine-other").textContent = e.unknown_flags.length ?
		"other flags (not read): " + e.unknown_flags.join(" ") : "";
}

// ---- the per-phase table ----
function drawTable() {
	const tb = document.querySelector("#phases tbody");
	for (const p of D.phases) {
		const tr = document.createElement("tr");
		tr.className = "row";
		tr.dataset.phase = p.name;
		tr.innerHTML = "<td>" + esc(p.name) + "</td><td>" + p.time_s.toFixed(3) + " s</td><td>" +
			p.calls + "</td>" + CLS.map((c) => "<td>" + fmt(p.rss_growth_bytes[c]) + "</td>").join("") +
			"<td>" + fmt(p.sampled_bytes) + "</td>";
		tr.addEventListener("click", () => selectPhase(p.name));
		tb.appendChild(tr);
	}
}

// ---- the flame graph of the selected growth ----
let zoom = null;
// The selection's bytes per stack: its phase, or its time range (a request's is half-open,
// [start, end): a sample at the boundary belongs to the request that starts there).
function selectedStacks() {
	const per = new Float64Array(D.stacks.length);
	const pid = sel.phase === null ? null : D.phase_names.indexOf(sel.phase);
	// a closed request's end belongs to the next one; an open one runs to the end
	const S = D.samples, halfOpen = sel.req !== null && REQ[sel.req - 1].end_s !== null;
	for (let i = 0; i < S.length; i += 3) {
		const t = S[i] / 1000, s = S[i + 1];
		if (pid !== null && D.stacks[s][0] !== pid) continue;
		if (sel.from !== null && (t < sel.from || t > sel.to || (halfOpen && t === sel.to))) continue;
		per[s] += S[i + 2];
	}
	return per;
}
function buildTree(per) {
	const root = { name: "all", bytes: 0, kids: new Map() };
	for (let s = 0; s < per.length; s++) {
		const st = D.stacks[s], w = per[s];
		if (!w) continue;
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
// What grew in the selection: the stacks' causes (model/causes.c matched them; a cause's
// rule is the one with the most of its bytes, the first such in stack order).
function drawCauses(per, label) {
	const by = new Map();
	let total = 0, unmatched = 0;
	for (let s = 0; s < per.length; s++) {
		const w = per[s], c = D.stacks[s][3], rule = D.stacks[s][4];
		if (!w) continue;
		total += w;
		if (c < 0) { unmatched += w; continue; }
		let e = by.get(c);
		if (!e) { e = { c: c, bytes: 0, rules: new Map() }; by.set(c, e); }
		e.bytes += w;
		e.rules.set(rule, (e.rules.get(rule) || 0) + w);
	}
	const rows = [...by.values()].sort((a, b) => b.bytes - a.bytes).map((e) => {
		let best = -1, most = -1;
		for (const [r, b] of e.rules) if (b > most) { best = r; most = b; }
		const cz = D.causes[e.c], where = best >= 0 ? D.strings[best] : "";
		return "<tr class=\"crow\" data-name=\"" + esc(cz.name) + "\">" + cell(cz.name, cz.name) +
			cell(e.bytes, fmt(e.bytes)) +
			cell(total ? e.bytes / total : 0, total ? (100 * e.bytes / total).toFixed(1) + "%" : "-") +
			cell(D.peak_total ? e.bytes / D.peak_total : "", D.peak_total ?
			     (100 * e.bytes / D.peak_total).toFixed(1) + "%" : "-") +
			cell(where, where) + cell(cz.remedy, cz.remedy) + "</tr>";
	});
	if (unmatched)
		rows.push("<tr class=\"unmatched\">" + cell("", "other code paths (no rule names them)") +
			cell(unmatched, fmt(unmatched)) + cell(unmatched / total,
			(100 * unmatched / total).toFixed(1) + "%") + "<td></td><td></td><td></td></tr>");
	document.querySelector("#causes tbody").innerHTML = rows.join("");
	const h = document.getElementById("causes-sel");
	h.textContent = label;
	h.dataset.bytes = total;
}
function selLabel() {
	return sel.phase !== null ? " in " + sel.phase : sel.req !== null ? " in request " + sel.req +
		" (" + sel.from.toFixed(3) + " to " + sel.to.toFixed(3) + " s)" : sel.from !== null ?
		" from " + sel.from.toFixed(3) + " to " + sel.to.toFixed(3) + " s" : " in the whole run";
}
function drawFlame() {
	const per = selectedStacks();
	const tree = buildTree(per);
	drawCauses(per, selLabel());
	const top = zoom && zoom.path ? findPath(tree, zoom.path) || tree : tree;
	const box = document.getElementById("flame");
	box.innerHTML = "";
	const total = document.getElementById("flame-total");
	total.dataset.bytes = tree.bytes;
	total.textContent = fmt(tree.bytes) + " sampled" + selLabel();
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

function markRows(phase, req) {
	for (const tr of document.querySelectorAll("tr.row"))
		tr.classList.toggle("sel", tr.dataset.phase === phase);
	for (const tr of document.querySelectorAll("tr.rrow.sel")) tr.classList.remove("sel");
	for (const r of document.querySelectorAll("#chart rect.req.sel")) r.classList.remove("sel");
	if (req === null) return;
	reqRowsUpTo(req);
	const tr = document.querySelector("tr.rrow[data-req=\"" + req + "\"]");
	if (tr) {
		tr.classList.add("sel");
		const box = tr.closest(".scroll");
		if (tr.offsetTop < box.scrollTop || tr.offsetTop > box.scrollTop + box.clientHeight - 20)
			box.scrollTop = tr.offsetTop - box.clientHeight / 2;
	}
	const r = document.querySelector("#chart rect.req[data-req=\"" + req + "\"]");
	if (r) r.classList.add("sel");
}
function selectPhase(name) {
	sel.phase = name; sel.from = sel.to = sel.req = null; zoom = null;
	document.getElementById("range").setAttribute("width", 0);
	markRows(name, null);
	drawFlame();
}
function selectRange(a, b) {
	sel.phase = sel.req = null; sel.from = a; sel.to = b; zoom = null;
	markRows(null, null);
	drawFlame();
}
function selectRequest(n) {
	const r = REQ[n - 1];
	sel.phase = null; sel.req = n; sel.from = r.start_s; sel.to = reqEnd(r); zoom = null;
	const box = document.getElementById("range");
	box.setAttribute("x", X(sel.from));
	box.setAttribute("width", Math.max(1, X(sel.to) - X(sel.from)));
	markRows(null, n);
	drawFlame();
}
document.getElementById("all").addEventListener("click", () => {
	sel.phase = sel.from = sel.to = sel.req = null; zoom = null;
	document.getElementById("range").setAttribute("width", 0);
	markRows(null, null);
	drawFlame();
});
document.getElementById("unzoom").addEventListener("click", () => { zoom = null; drawFlame(); });
document.getElementById("search").addEventListener("input", drawFlame);
document.getElementById("title").textContent = D.title;
drawChart();
drawTable();
// the flame graph reads its width (a layout): before the long request table is in the page
drawFlame();
drawRequests();
drawCeilings();
drawEngine();
performance.mark("memphase-drawn");
// the first frame with all of it laid out and painted
requestAnimationFrame(() => setTimeout(() => performance.mark("memphase-shown"), 0));
