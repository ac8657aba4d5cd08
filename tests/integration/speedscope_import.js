// SPDX-License-Identifier: GPL-2.0
// Imports a trace into speedscope (its release build from npm) in headless chromium, as a
// user dropping the file on it would: prints one "WARN <text>" line for each warning or
// error speedscope's own code logs to the console (its importer's "Tried to end ..." and
// "Frame ... was still open" among them; chromium's WebGL notices are not speedscope's), then
// "OK <title>" once speedscope shows the profile, "FAIL <why>" otherwise.
// argv: chromium, speedscope release dir, trace file.
const http = require('http');
const fs = require('fs');
const path = require('path');
const puppeteer = require('puppeteer-core');

const [chromium, root, trace] = process.argv.slice(2);
const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css',
		'.json': 'application/json', '.wasm': 'application/wasm' };

const server = http.createServer((req, res) => {
	const url = decodeURIComponent(req.url.split('?')[0].split('#')[0]);
	const file = url === '/trace.json' ? trace : path.join(root, path.normalize(url));
	fs.readFile(file, (err, data) => {
		if (err) {
			res.writeHead(404);
			res.end();
			return;
		}
		res.writeHead(200, { 'Content-Type': types[path.extname(file)] || 'application/octet-stream' });
		res.end(data);
	});
});

(async () => {
	await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
	const port = server.address().port;
	const browser = await puppeteer.launch({ executablePath: chromium, headless: true,
		args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
	const errors = [];
	const warnings = [];
	try {
		const page = await browser.newPage();
		page.on('pageerror', (e) => errors.push(String(e)));
		page.on('console', (msg) => {
			const url = (msg.location() || {}).url || '';
			if (['warn', 'warning', 'error', 'assert'].includes(msg.type()) &&
			    /\/speedscope-[^/]*\.js$/.test(url))
				warnings.push(msg.text());
		});
		const base = `http://127.0.0.1:${port}`;
		await page.goto(`${base}/index.html#profileURL=${encodeURIComponent(base + '/trace.json')}&title=memphase`,
				{ waitUntil: 'load' });
		// speedscope puts the profile's name in the title once it has imported it
		await page.waitForFunction(() => document.title.includes('memphase') ||
			document.body.innerText.match(/Something went wrong|Unrecognized format|Failed/),
			{ timeout: 30000 });
		const text = await page.evaluate(() => document.body.innerText);
		const title = await page.title();
		for (const w of warnings)
			console.log('WARN ' + w.replace(/\s+/g, ' '));
		if (text.match(/Something went wrong|Unrecognized format|Failed/) || errors.length)
			console.log('FAIL ' + (errors.join('; ') || text.slice(0, 200)));
		else
			console.log('OK ' + title);
	} catch (e) {
		console.log('FAIL ' + e + ' ' + errors.join('; '));
	} finally {
		await browser.close();
		server.close();
	}
})();
