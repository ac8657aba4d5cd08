// SPDX-License-Identifier: GPL-2.0
// Opens memphase's HTML report from file:// in headless chromium and prints one JSON line:
// console errors, the phases the chart and the table show, the flame graph's total
// before and after clicking PHASE's row and band; the requests (their slices and lines in
// the chart, the table's cells, the flame graph's and the causes' totals after clicking
// each one's row and slice, and what the page's samples hold in each one's range); the
// causes table; the ceilings, the verdict and the engine's settings; a screenshot to SHOT
// (with request 2 selected, when there is one).
// argv: chromium, report.html, PHASE, SHOT
const puppeteer = require('puppeteer-core');
const [chromium, file, phase, shot] = process.argv.slice(2);

(async () => {
	const browser = await puppeteer.launch({ executablePath: chromium, headless: true,
		args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
	const out = { errors: [], requests: [] };
	try {
		const page = await browser.newPage();
		await page.setViewport({ width: 1100, height: 1000 });
		page.on('console', (m) => { if (m.type() === 'error') out.errors.push(m.text()); });
		page.on('pageerror', (e) => out.errors.push(String(e)));
		page.on('request', (r) => { if (!r.url().startsWith('file:')) out.requests.push(r.url()); });
		await page.goto('file://' + file, { waitUntil: 'load' });
		out.bands = await page.$$eval('#chart rect.band', (r) => [...new Set(r.map((x) => x.dataset.phase))]);
		out.peak_label = await page.$$eval('#chart text.peak', (t) => t.map((x) => x.textContent));
		out.yticks = await page.$$eval('#chart text.ytick', (t) => t.map((x) => x.textContent));
		out.xticks = await page.$$eval('#chart text.xtick', (t) => t.map((x) => x.textContent));
		out.rows = await page.$$eval('tr.row', (r) => r.map((x) => x.dataset.phase));
		out.ooms = await page.$$eval('#chart text.oom', (t) => t.length);
		out.total = Number(await page.$eval('#flame-total', (e) => e.dataset.bytes));
		await page.click('tr.row[data-phase="' + phase + '"]');
		out.row_total = Number(await page.$eval('#flame-total', (e) => e.dataset.bytes));
		await page.click('#all');
		await page.click('#chart rect.band[data-phase="' + phase + '"]');
		out.band_total = Number(await page.$eval('#flame-total', (e) => e.dataset.bytes));
		out.frames = await page.$$eval('#flame .fn', (d) => d.length);
		// drag over the whole chart: everything is in the range again
		const box = await (await page.$('#chart')).boundingBox();
		await page.click('#all');
		await page.mouse.move(box.x + 51, box.y + 100);
		await page.mouse.down();
		await page.mouse.move(box.x + box.width - 5, box.y + 100, { steps: 5 });
		await page.mouse.up();
		out.drag_total = Number(await page.$eval('#flame-total', (e) => e.dataset.bytes));
		// where it stops (the ceilings' cells, the verdict) and the engine's settings
		out.ceilings = await page.$$eval('#ceilings tbody tr', (r) => r.map((x) =>
			[...x.children].map((td) => td.dataset.v)));
		out.verdict = await page.$$eval('#verdict li', (l) => l.map((x) => x.textContent));
		out.engine = await page.$$eval('#engine tbody tr', (r) => r.map((x) =>
			[...x.children].map((td) => td.textContent)));
		out.engine_title = await page.$eval('#engine-h', (e) => e.textContent);
		// the whole run's causes, then each request: its row, and its slice in the chart
		out.causes = await page.$$eval('#causes tr.crow', (r) => r.map((x) =>
			[...x.children].map((td) => td.dataset.v)));
		out.causes_unmatched = await page.$$eval('#causes tr.unmatched', (r) =>
			r.map((x) => Number(x.children[1].dataset.v)));
		out.req_slices = await page.$$eval('#chart rect.req', (r) => r.length);
		out.req_lines = await page.$$eval('#chart line.reqline', (r) => r.length);
		out.req_rows = await page.$$eval('#requests tr.rrow', (r) => r.map((x) =>
			[...x.children].map((td) => td.dataset.v)));
		// what each request's range holds, from the page's data: [start, end) (a sample at
		// the boundary is the next request's), the open one to the end of the run
		out.req_expected = await page.evaluate(() => {
			const d = JSON.parse(document.getElementById('data').textContent);
			return d.requests.map((r) => {
				const a = r.start_s, b = r.end_s === null ? d.duration_s : r.end_s;
				let sum = 0;
				for (let i = 0; i < d.samples.length; i += 3) {
					const t = d.samples[i] / 1000;
					if (t >= a && (t < b || (r.end_s === null && t <= b)))
						sum += d.samples[i + 2];
				}
				return sum;
			});
		});
		out.req_totals = [];
		out.req_causes = [];
		out.slice_totals = [];
		// the first 8 (the benchmark's page has 1,000)
		for (let n = 1; n <= Math.min(out.req_rows.length, 8); n++) {
			await page.click('#requests tr.rrow[data-req="' + n + '"]');
			out.req_totals.push(Number(await page.$eval('#flame-total', (e) => e.dataset.bytes)));
			out.req_causes.push(Number(await page.$eval('#causes-sel', (e) => e.dataset.bytes)));
			await page.click('#all');
			// scrolled into view (the table may be long), clicked in its middle
			await (await page.$('#chart rect.req[data-req="' + n + '"]')).click();
			out.slice_totals.push(Number(await page.$eval('#flame-total', (e) => e.dataset.bytes)));
		}
		if (out.req_slices > 200) {
			// a long table: 200 rows, 200 more as it scrolls to their end, all of them up
			// to a request selected in the chart (its row selected and in view)
			await page.$eval('#requests-box .scroll', (e) => { e.scrollTop = e.scrollHeight; });
			await page.waitForFunction(() =>
				document.querySelectorAll('#requests tr.rrow').length > 200, { timeout: 5000 })
				.catch(() => {});
			out.rows_scrolled = await page.$$eval('#requests tr.rrow', (r) => r.length);
			const n = out.req_slices;
			await (await page.$('#chart rect.req[data-req="' + n + '"]')).click();
			out.last = { n: n, total: Number(await page.$eval('#flame-total',
				(e) => e.dataset.bytes)), expected: out.req_expected[n - 1],
				rows: await page.$$eval('#requests tr.rrow', (r) => r.length),
				selected: await page.$$eval('#requests tr.rrow.sel', (r) =>
					r.map((x) => Number(x.dataset.req))) };
		}
		if (out.req_rows.length > 1)
			await page.click('#requests tr.rrow[data-req="2"]');
		await page.type('#search', 'touch');
		out.matched = await page.$eval('#matched', (e) => e.textContent);
		await page.screenshot({ path: shot, fullPage: true });
		out.paint_ms = await page.evaluate(() => {
			const p = performance.getEntriesByName('first-contentful-paint')[0];
			return p ? p.startTime : null;
		});
		// the page's script has drawn the chart, the table and the flame graph
		out.drawn_ms = await page.evaluate(() => {
			const p = performance.getEntriesByName('memphase-drawn')[0];
			return p ? p.startTime : null;
		});
		// and the first frame after it (laid out and painted)
		out.shown_ms = await page.evaluate(() => {
			const p = performance.getEntriesByName('memphase-shown')[0];
			return p ? p.startTime : null;
		});
	} catch (e) {
		out.errors.push('driver: ' + e);
	} finally {
		await browser.close();
	}
	console.log(JSON.stringify(out));
})();
