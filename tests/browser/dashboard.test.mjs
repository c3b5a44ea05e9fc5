// dashboard.test.mjs - the dashboard in headless Chromium: verdicts, escaping, log in and approve.
//
// Debian's chromium, driven by playwright-core (never a downloaded browser).
// Run by `make check-browser`; PULLGATE names the binary.  Screenshots are
// kept in tests/artifacts/.  Prints one TAP line per assertion and a final
// "N passed, N failed" line; exits non-zero when anything failed.
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHmac } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
// how long a wait for what the page will show may last: only a broken page reaches it
const patience = 1000 * Number(process.env.PULLGATE_TEST_PATIENCE || 900);
const top = join(here, '..', '..');
const artifacts = join(top, 'tests', 'artifacts');
mkdirSync(artifacts, { recursive: true });

let passed = 0, failed = 0;
function ok(cond, name, detail) {
	if (cond) {
		passed++;
		console.log(`ok ${passed + failed} - ${name}`);
	} else {
		failed++;
		console.log(`not ok ${passed + failed} - ${name}`);
		if (detail !== undefined)
			console.log(`#   got: ${JSON.stringify(detail)}`);
	}
}

// Start the server with the fixtures and wait for READY.
function startServer() {
	return new Promise((resolve, reject) => {
		const child = spawn('sh', [join(here, 'serve-fixture.sh')], {
			env: process.env, stdio: ['ignore', 'pipe', 'inherit'],
		});
		const info = { child };
		let buf = '';
		const timer = setTimeout(() => reject(new Error(`the server did not get ready in ${patience / 1000} s`)), patience);
		child.stdout.on('data', (d) => {
			buf += d.toString();
			let nl;
			while ((nl = buf.indexOf('\n')) >= 0) {
				const line = buf.slice(0, nl);
				buf = buf.slice(nl + 1);
				const m = line.match(/^([A-Z0-9_]+)=(.*)$/);
				if (m)
					info[m[1]] = m[2];
				if (line === 'READY') {
					clearTimeout(timer);
					resolve(info);
				}
			}
		});
		child.on('exit', (code) => {
			clearTimeout(timer);
			reject(new Error(`serve-fixture.sh exited with ${code}`));
		});
	});
}

const srv = await startServer();
const profile = mkdtempSync(join(tmpdir(), 'pullgate-chromium-'));
let context;
try {
	context = await chromium.launchPersistentContext(profile, {
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		headless: true,
		args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
			'--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
		viewport: { width: 1280, height: 900 },
	});
	const page = context.pages()[0] || await context.newPage();
	const dialogs = [];
	const cspErrors = [];
	page.on('dialog', async (d) => { dialogs.push(d.message()); await d.dismiss(); });
	page.on('console', (m) => {
		if (m.type() === 'error' && /Content Security Policy|Refused/.test(m.text()))
			cspErrors.push(m.text());
	});
	const url = srv.URL;

	// --- the queue -----------------------------------------------------------------
	await page.goto(url + '/');
	const row1 = page.locator(`#queue tr[data-id="${srv.ID1}"] .state`);
	ok(await row1.textContent() === 'rejected', 'the queue shows take one rejected', await row1.textContent());
	const row2 = page.locator(`#queue tr[data-id="${srv.ID2}"] .state`);
	ok(await row2.textContent() === 'waiting', 'and take two waiting for the maintainer', await row2.textContent());
	// the fixture's build and boot are stand-ins (tests/browser/fakes): never shown as real
	ok(await page.locator(`#queue tr[data-id="${srv.ID2}"] .simulated`).count() === 1 &&
		await page.locator(`#queue tr[data-id="${srv.ID1}"] .simulated`).count() === 0,
	'the queue marks take two simulated, and not take one (rejected before any build)');

	// --- take one: rejected, its rewritten maintainer merges listed --------------------
	await page.goto(`${url}/pulls/${srv.ID1}`);
	ok(await page.locator('h1 .state').textContent() === 'rejected', 'take one\'s page says rejected');
	const merges = await page.locator('#rewritten-merges li').allTextContents();
	ok(merges.length === 7, 'it lists the seven rewritten maintainer merges', merges.length);
	ok(merges.every((t) => / copies [0-9a-f]{12} Merge tag '/.test(t)),
		'each with its upstream original and subject', merges[0]);
	const diffRows = await page.locator('article.rewritten-merge').first().locator('tr').allTextContents();
	ok(diffRows.some((t) => /mergetag\s*\(none\)\s*tag '/.test(t)),
		'the side-by-side diff shows the mergetag the copy lost', diffRows);
	await page.screenshot({ path: join(artifacts, 'dashboard-take1-rejected.png'), fullPage: false });

	// --- the XSS pull renders inert -----------------------------------------------------------
	await page.goto(`${url}/pulls/${srv.IDX}`);
	const payload = '<script>alert(1)</script><img src=x onerror="alert(2)">';
	const subjects = await page.locator('.subject').allTextContents();
	ok(subjects.includes(payload), 'a commit subject with markup is shown as text', subjects);
	ok(await page.locator('main script, main img').count() === 0, 'and no element was made of it');
	// goto returned at the load event, which waits for the page's images and scripts: a
	// script made of the payload (inline, or an image's onerror) would have run by now
	ok(dialogs.length === 0, 'no script ran', dialogs);

	// --- log in and approve take two ----------------------------------------------------------
	await page.goto(`${url}/pulls/${srv.ID2}`);
	ok(await page.locator('#approve').count() === 0, 'a visitor is not offered approval');
	await page.goto(`${url}/login`);
	await page.fill('#user-name', 'maintainer');
	await page.fill('#password', 'not-the-password');
	await page.click('#login-button');
	await page.waitForFunction(() => document.getElementById('login-result').textContent !== '');
	ok(/wrong user name or password/.test(await page.locator('#login-result').textContent()),
		'a wrong password is refused');
	await page.fill('#password', srv.PASSWORD);
	await Promise.all([page.waitForURL(url + '/'), page.click('#login-button')]);
	ok(await page.locator('#user').textContent() === 'maintainer', 'the maintainer is logged in');
	ok(!(await page.evaluate(() => document.cookie)).includes('pg_session'),
		'the session cookie is out of reach of scripts (HttpOnly)');
	const cookie = (await context.cookies()).find((c) => c.name === 'pg_session');
	ok(cookie && cookie.httpOnly && cookie.sameSite === 'Strict', 'and SameSite=Strict', cookie);

	// --- live progress: a pull pushed now is watched while it builds ---------------------------
	// the front page, open before the push, shows it in the merge window by itself
	await page.goto(url + '/');
	const before = await page.locator('#window tr.window-pull').count();
	const body = readFileSync(srv.LIVE);
	// the signature covers "TIMESTAMP." and the body, and the timestamp goes with it
	const ts = String(Math.floor(Date.now() / 1000));
	const sig = 'sha256=' + createHmac('sha256', srv.PUSH_SECRET).update(ts + '.').update(body)
		.digest('hex');
	const res = await fetch(url + '/hooks/push', {
		method: 'POST', body,
		headers: { 'Content-Type': 'application/json', 'X-Pullgate-Delivery': 'browser-live',
			'X-Pullgate-Timestamp': ts, 'X-Pullgate-Signature': sig },
	});
	const live = (await res.json()).jobs[0];
	ok(res.status === 202, 'a push signed in the test is accepted', res.status);
	// building is where it stops (GO below): no change of the window comes after it
	await page.waitForSelector(`#window tr.window-pull[data-pull="${live}"] .state[data-state="building"]`,
		{ timeout: patience });
	ok(await page.locator('#window tr.window-pull').count() === before + 1,
		'the front page\'s merge window shows it as it runs, without a reload by hand', before);
	await page.goto(`${url}/pulls/${live}`);
	ok(await page.evaluate(() => document.body.dataset.final) === 'no', 'its page opens while it runs');
	const opened = await page.locator('h1 .state').textContent();
	// the build stops part of the way until this test has seen it (serve-fixture.sh's GO)
	await page.waitForSelector('#progress li:has-text("[build]")', { timeout: patience });
	const seen = await page.locator('#progress li').allTextContents();
	ok(seen.some((t) => /^\[build\] /.test(t)) && seen.some((t) => t === 'state: building'),
		'server-sent events show the build as it runs', seen);
	// from the build's start the run is the stand-ins': the page's script marks it, no reload
	const marked = await page.evaluate(() => {
		const s = document.querySelector('h1 .state + #simulated');
		return { final: document.body.dataset.final, standIns: document.body.dataset.standIns,
			text: s && s.textContent, title: s && s.title };
	});
	ok(marked.final === 'no' && marked.standIns === 'yes' && marked.text === 'simulated' &&
		/^stand-in build and boot scripts ran/.test(marked.title),
	`the running pull is marked simulated while it builds (its page opened while ${opened})`, marked);
	// the build's status: one bar against the object count of take two's build, with an ETA
	// (a quarter of the way, for docs/dashboard-progress.png)
	await page.waitForFunction(() => {
		const st = document.getElementById('status'), bar = document.getElementById('status-bar');
		return st && !st.hidden && bar.hasAttribute('value') && bar.value * 4 >= bar.max &&
			/ left$/.test(document.getElementById('status-text').textContent);
	}, null, { timeout: patience });
	const bar = await page.evaluate(() => {
		const b = document.getElementById('status-bar');
		return { value: b.value, max: b.max, text: document.getElementById('status-text').textContent };
	});
	ok(bar.max > 1 && bar.value <= bar.max &&
		/^\[build\] [0-9]+\/[0-9]+ objects \([0-9]+%\), .*about .* left$/.test(bar.text),
		'the build shows a progress bar with its count and ETA', bar);
	await page.screenshot({ path: join(artifacts, 'dashboard-progress.png'), fullPage: false });
	writeFileSync(srv.GO, '');
	await page.waitForSelector('h1 .state[data-state="waiting"]', { timeout: patience });
	ok(await page.evaluate(() => document.body.dataset.final) === 'yes',
		'the page reloads by itself when the pull is done');

	await page.goto(`${url}/pulls/${srv.ID2}`);
	ok(await page.locator('#kunit-table tr.ktap-pass').count() === 4, 'take two shows its KUnit results');
	ok(/^Merge tag 'hardening-v6.16-rc1-fix1-take2' of /.test(await page.locator('.merge-message').textContent()),
		'and previews its merge commit');
	await Promise.all([page.waitForLoadState('load'), page.waitForEvent('framenavigated'),
		page.click('#approve')]);
	await page.waitForSelector('h1 .state[data-state="approved"]', { timeout: patience });
	ok(await page.locator('h1 .state').textContent() === 'approved', 'approving moves it to approved');
	ok(/maintainer\s+approve/.test(await page.locator('#decisions').textContent()),
		'and the page records who approved');
	await page.screenshot({ path: join(artifacts, 'dashboard-take2-approved.png'), fullPage: true });
	ok(cspErrors.length === 0, 'the Content-Security-Policy blocked nothing of ours', cspErrors);
} catch (e) {
	ok(false, 'the browser test ran to the end', String(e && e.stack || e));
} finally {
	if (context)
		await context.close();
	rmSync(profile, { recursive: true, force: true });
	srv.child.kill('SIGTERM');
}
console.log(`1..${passed + failed}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
