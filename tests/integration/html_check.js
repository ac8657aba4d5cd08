// SPDX-License-Identifier: GPL-2.0
// Opens memphase's HTML report from file:// in headless chromium and prints one JSON line:
// console errors, the phases the chart and the table show, the flame graph's total
// before and after clicking PHASE's row and band, and a screenshot to SHOT.
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
	} catch (e) {
		out.errors.push('driver: ' + e);
	} finally {
		await browser.close();
	}
	console.log(JSON.stringify(out));
})();
