// app.js - the dashboard's behaviour: log in and out, decisions with the CSRF token, live progress and window.
// Everything from the server is put in the page with textContent, never as HTML.
'use strict';

(function () {
	const body = document.body;
	const meta = document.querySelector('meta[name="csrf-token"]');
	const csrf = meta ? meta.getAttribute('content') : null;
	const FINAL = ['approved', 'passed', 'rejected', 'cancelled', 'error', 'waiting'];

	async function post(url, data) {
		const headers = { 'Content-Type': 'application/json' };
		if (csrf)
			headers['X-CSRF-Token'] = csrf;
		const res = await fetch(url, {
			method: 'POST', headers, credentials: 'same-origin',
			body: JSON.stringify(data || {}),
		});
		let json = null;
		try { json = await res.json(); } catch (e) { json = null; }
		return { ok: res.ok, status: res.status, json };
	}

	const logout = document.getElementById('logout');
	if (logout)
		logout.addEventListener('click', async () => {
			await post('/api/logout');
			location.reload();
		});

	const login = document.getElementById('login');
	if (login)
		login.addEventListener('submit', async (ev) => {
			ev.preventDefault();
			const out = document.getElementById('login-result');
			const r = await post('/api/login', {
				user: document.getElementById('user-name').value,
				password: document.getElementById('password').value,
			});
			if (r.ok) {
				const back = document.referrer && new URL(document.referrer).origin === location.origin &&
					!document.referrer.endsWith('/login') ? document.referrer : '/';
				location.assign(back);
			} else {
				out.textContent = (r.json && r.json.error) || ('log in failed: ' + r.status);
			}
		});

	const pull = body.dataset.pull;
	document.querySelectorAll('button[data-action]').forEach((b) => {
		b.addEventListener('click', async () => {
			const out = document.getElementById('action-result');
			b.disabled = true;
			out.textContent = b.dataset.action + '...';
			const r = await post('/api/pulls/' + encodeURIComponent(pull) + '/' + b.dataset.action);
			if (r.ok) {
				location.reload();
			} else {
				b.disabled = false;
				out.textContent = (r.json && r.json.error) || ('failed: ' + r.status);
			}
		});
	});

	// the front page's merge window, live: each change of the queue (a state, a hold, a
	// move) reloads the page, and between changes each ETA counts down from the server's
	const win = document.getElementById('window-queue');
	if (!pull && win && window.EventSource) {
		const shown = Date.now();
		setInterval(() => {
			const gone = (Date.now() - shown) / 1000;
			document.querySelectorAll('#window [data-eta]').forEach((el) => {
				const left = Number(el.dataset.eta) - gone;
				el.textContent = left > 0 ? 'in about ' + Math.max(1, Math.round(left / 60)) +
					' min' : 'any moment now';
			});
		}, 30000);
		const src = new EventSource('/api/queue/events');
		src.addEventListener('queue', () => {
			src.close();
			location.reload();
		});
	}

	if (pull && body.dataset.final === 'no' && window.EventSource) {
		const list = document.getElementById('progress');
		const badge = document.querySelector('h1 .state');
		const src = new EventSource('/api/pulls/' + encodeURIComponent(pull) + '/events');
		const add = (cls, text) => {
			const li = document.createElement('li');
			li.className = cls;
			li.textContent = text;
			list.appendChild(li);
			while (list.children.length > 200)
				list.removeChild(list.firstChild);
		};
		const status = document.getElementById('status');
		const bar = document.getElementById('status-bar');
		const statusText = document.getElementById('status-text');
		// a status (objects built of the last build's total, with its ETA) is one bar,
		// redrawn; every other progress event is a line of the log
		src.addEventListener('progress', (e) => {
			const d = JSON.parse(e.data);
			const text = (d.stage ? '[' + d.stage + '] ' : '') + d.text;
			if (!d.transient) {
				if (status)
					status.hidden = true;
				add('progress', text);
				return;
			}
			if (!status)
				return;
			status.hidden = false;
			statusText.textContent = text;
			if (d.total > 0) {
				bar.max = d.total;
				bar.value = Math.min(d.done, d.total);
			} else {
				bar.removeAttribute('value'); // indeterminate: no total known yet
			}
		});
		// a run on stand-in scripts is one from the moment its build starts (the
		// server says whether its scripts are stand-ins): never shown as a real one
		const standIns = body.dataset.standIns === 'yes';
		const markSimulated = () => {
			if (!badge || document.getElementById('simulated'))
				return;
			const s = document.createElement('span');
			s.className = 'simulated';
			s.id = 'simulated';
			s.title = 'stand-in build and boot scripts ran: nothing was really compiled or booted';
			s.textContent = 'simulated';
			badge.after(' ', s);
		};
		src.addEventListener('state', (e) => {
			const d = JSON.parse(e.data);
			add('state', 'state: ' + d.text);
			if (badge) {
				badge.textContent = d.text;
				badge.className = 'state state-' + d.text.replace(/[^a-z]/g, '');
			}
			if (standIns && (d.text === 'building' || d.text === 'booting'))
				markSimulated();
			if (FINAL.includes(d.text)) {
				src.close();
				setTimeout(() => location.reload(), 300);
			}
		});
		src.addEventListener('end', () => {
			src.close();
			setTimeout(() => location.reload(), 300);
		});
	}
})();
