// Browser test of the interactive graph page (nn dot -o graph.html): drives Debian's
// Chromium through puppeteer-core (which never downloads a browser), offline, and
// checks the page's contract (/work/notes/page_contract.md) step by step.
//
//   node page_test.mjs --page FILE.html --series NAME --op OPNAME --screenshot OUT.png [--steps N]
//
// Prints "load_ms <ms>" and one "ok - ..." line per check; exits 1 at the first failure.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import puppeteer from 'puppeteer-core';

const TIMEOUT_MS = 60000;

function usage(msg) {
  console.error('page_test: ' + msg);
  console.error('usage: node page_test.mjs --page FILE.html --series NAME --op OPNAME --screenshot OUT.png [--steps N]');
  process.exit(2);
}

function parseArgs(argv) {
  const opts = {};
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i], value = argv[i + 1];
    if (!['--page', '--series', '--op', '--screenshot', '--steps'].includes(key)) usage('unknown argument ' + key);
    if (value === undefined) usage(key + ' needs a value');
    opts[key.slice(2)] = value;
  }
  for (const k of ['page', 'series', 'op', 'screenshot']) if (!opts[k]) usage('--' + k + ' is required');
  opts.steps = opts.steps === undefined ? 1 : Number(opts.steps);
  if (!Number.isInteger(opts.steps) || opts.steps < 1) usage('--steps must be a positive integer');
  if (!fs.existsSync(opts.page)) usage('no such page: ' + opts.page);
  return opts;
}

const opts = parseArgs(process.argv.slice(2));
// A closed stdout (e.g. piped into head) must not kill the test before it closes the browser.
process.stdout.on('error', () => {});
let browser = null;
let userDataDir = null;
let problem = null; // first console error/warning, page exception or blocked request
let finished = false;

async function cleanup() {
  if (browser) {
    const b = browser;
    browser = null;
    // A hung browser must not keep the test alive: give close() 5 s, then kill it.
    await Promise.race([b.close(), new Promise((r) => setTimeout(r, 5000))]).catch(() => {});
    try { b.process()?.kill('SIGKILL'); } catch { /* already gone */ }
  }
  if (userDataDir) fs.rmSync(userDataDir, { recursive: true, force: true });
}

async function fail(msg) {
  if (finished) return;
  finished = true;
  console.log('not ok - ' + msg);
  await cleanup();
  process.exit(1);
}

class Failure extends Error {}
function check(cond, msg) { if (!cond) throw new Failure(msg); }
function ok(msg) {
  if (problem) throw new Failure(problem);
  console.log('ok - ' + msg);
}

const overall = setTimeout(() => fail('timed out after ' + TIMEOUT_MS / 1000 + ' s'), TIMEOUT_MS);

async function viewId(page) { return page.evaluate(() => document.body.dataset.view); }

// Clicks the box g.node#id in the current view and waits for the body's data-view to become
// the view it opens (by the contract, a view's id is its box's item id).
async function openBox(page, id, label, want = id) {
  const sel = '#view g.node[id="' + id + '"]';
  const g = await page.$(sel);
  check(g, 'no box ' + id + ' (' + label + ') in view ' + await viewId(page));
  await g.click();
  await page.waitForFunction((v) => document.body.dataset.view === v, { timeout: 5000 }, want)
    .catch(async () => { throw new Failure('clicking ' + label + ' left data-view at ' + await viewId(page) + ', not ' + want); });
}

async function run() {
  userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nn-page-test-'));
  browser = await puppeteer.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    userDataDir,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage();
  await page.setViewport({ width: 1400, height: 900 });

  // Offline: only the page itself (file:) and inline data: may load; anything else is a failure.
  await page.setRequestInterception(true);
  page.on('request', (req) => {
    const url = req.url();
    if (url.startsWith('file:') || url.startsWith('data:')) return req.continue();
    problem ??= 'the page tried to fetch ' + url;
    return req.abort();
  });
  page.on('console', (msg) => {
    if (['error', 'warn', 'warning', 'assert'].includes(msg.type())) problem ??= 'console ' + msg.type() + ': ' + msg.text();
  });
  page.on('pageerror', (err) => { problem ??= 'page exception: ' + (err.message || err); });

  await page.goto(pathToFileURL(path.resolve(opts.page)).href, { waitUntil: 'load', timeout: 30000 });
  await page.waitForFunction(() => window.nnReady !== undefined, { timeout: 30000 })
    .catch(() => { throw new Failure(problem || 'window.nnReady was never set'); });
  const loadMs = await page.evaluate(() => window.nnReady);
  console.log('load_ms ' + loadMs.toFixed(1));

  const data = await page.evaluate(() => JSON.parse(document.getElementById('nn-graph').textContent));
  check(Array.isArray(data.views) && data.views.length && data.items, 'the embedded JSON has no views or items');
  const views = new Map(data.views.map((v) => [v.id, v]));
  const home = data.views[0].id;

  // Overview on screen.
  const shown = await page.evaluate(() => {
    const svg = document.querySelector('#view svg');
    const r = svg && svg.getBoundingClientRect();
    return { view: document.body.dataset.view, svg: !!svg, w: r ? r.width : 0, h: r ? r.height : 0,
      quirks: document.compatMode !== 'CSS1Compat' };
  });
  check(!shown.quirks, 'the page renders in quirks mode');
  check(shown.view === home, 'data-view is ' + shown.view + ', not the overview ' + home);
  check(shown.svg && shown.w > 100 && shown.h > 100, 'the overview svg is not on screen in #view');
  ok('overview ' + home + ' on screen (' + Math.round(shown.w) + 'x' + Math.round(shown.h) + ')');

  // The series box: open the boxes above it first when it is not drawn in the overview.
  const found = Object.entries(data.items).find(([, it]) => it.kind === 'series' && String(it.label).startsWith(opts.series));
  check(found, 'no item of kind series whose label starts with ' + JSON.stringify(opts.series));
  const [seriesId, series] = found;
  check(series.open && views.has(series.open), 'series ' + seriesId + ' opens no view');
  const above = [];
  for (let v = series.view; v && v !== home; v = views.get(v)?.parent) above.unshift(v);
  for (const v of above) {
    await openBox(page, v, views.get(v)?.name || v);
    ok('opened ' + v + ' (' + (views.get(v)?.name || v) + ') on the way to the series');
  }
  await openBox(page, seriesId, series.label, series.open);
  ok('clicking ' + JSON.stringify(series.label) + ' shows view ' + series.open);

  // Its steps are drawn as group boxes labelled NAME #k.
  const steps = await page.evaluate((items) => Array.from(document.querySelectorAll('#view g.node.group'), (g) => ({
    id: g.id, text: Array.from(g.querySelectorAll('text'), (t) => t.textContent).join(''),
    label: items[g.id] ? items[g.id].label : null, open: items[g.id] ? items[g.id].open : null,
  })), data.items);
  check(steps.length >= opts.steps, 'the series view shows ' + steps.length + ' step boxes, wanted at least ' + opts.steps);
  const squash = (s) => String(s).replace(/\s+/g, '');
  const numbers = new Set();
  for (const s of steps) {
    check(s.label !== null, 'step box ' + s.id + ' has no item');
    const m = s.label.match(/#(\d+)\s*$/);
    check(s.label.startsWith(opts.series) && m, 'step box ' + s.id + ' is labelled ' + JSON.stringify(s.label) + ', not "' + opts.series + ' #k"');
    check(squash(s.text).includes(squash(s.label)), 'step box ' + s.id + ' draws ' + JSON.stringify(s.text) + ', not its label');
    check(!numbers.has(m[1]), 'two step boxes are numbered #' + m[1]);
    numbers.add(m[1]);
  }
  ok(steps.length + ' step boxes ' + JSON.stringify(steps[0].label) + ' .. ' + JSON.stringify(steps[steps.length - 1].label));

  // A step opens, and Escape goes back up one.
  const step = steps.find((s) => s.open && views.has(s.open));
  if (step) {
    await openBox(page, step.id, step.label, step.open);
    check(await page.$('#view svg'), 'step view ' + step.id + ' shows no svg');
    ok('clicking ' + JSON.stringify(step.label) + ' shows its view');
    await page.keyboard.press('Escape');
    check(await viewId(page) === series.open, 'Escape went to ' + await viewId(page) + ', not back up to ' + series.open);
    ok('Escape goes back up to the series view');
  }

  // Breadcrumb back to the overview.
  const crumb = await page.$('#crumbs [data-view="' + home + '"]') ||
    await page.evaluateHandle(() => document.querySelector('#crumbs button, #crumbs a'));
  check(crumb && crumb.asElement(), 'no breadcrumb leading back to the overview');
  await crumb.asElement().click();
  const back = await page.evaluate(() => ({ view: document.body.dataset.view, svg: !!document.querySelector('#view svg') }));
  check(back.view === home && back.svg, 'the breadcrumb left data-view at ' + back.view + ', not the overview ' + home);
  ok('breadcrumb goes back up to the overview');

  // Search.
  await page.click('#search');
  await page.type('#search', opts.op);
  const hits = await page.evaluate(() => ({
    here: document.querySelectorAll('#view .nn-match').length, found: document.getElementById('found').textContent.trim(),
  }));
  check(hits.here >= 1, 'searching ' + JSON.stringify(opts.op) + ' marks nothing (.nn-match) in the overview');
  check(hits.found, '#found is empty after searching ' + JSON.stringify(opts.op));
  ok('search ' + JSON.stringify(opts.op) + ' marks ' + hits.here + ' nodes here, #found says "' + hits.found + '"');

  // Enter jumps to the first match, opening its view.
  const q = opts.op.toLowerCase();
  const first = Object.entries(data.items).find(([id, it]) => id.toLowerCase().includes(q) || String(it.label).toLowerCase().includes(q));
  await page.keyboard.press('Enter');
  const jumped = await page.evaluate((id) => {
    const g = document.querySelector('#view g.node[id="' + id + '"]');
    return { view: document.body.dataset.view, match: !!g && g.classList.contains('nn-match') };
  }, first[0]);
  check(jumped.view === first[1].view && jumped.match, 'Enter went to view ' + jumped.view + ' without ' + first[0] + ' marked there');
  ok('Enter jumps to the first match ' + first[0] + ' in view ' + first[1].view);
  const crumb2 = await page.$('#crumbs [data-view="' + home + '"]');
  if (crumb2) await crumb2.click();

  // Memory colours, in place.
  const colour = await page.evaluate(() => {
    const sel = document.getElementById('colour');
    const opt = sel && sel.querySelector('option[value="memory"]');
    return { exists: !!sel, enabled: !!opt && !sel.disabled && !opt.disabled };
  });
  check(colour.exists, 'no #colour select');
  if (colour.enabled) {
    await page.select('#colour', 'memory');
    const res = await page.evaluate((items) => {
      const shapeOf = (g) => Array.from(g.children).find((c) => ['polygon', 'path', 'ellipse'].includes(c.localName));
      const norm = (c) => String(c || '').toLowerCase();
      let best = null;
      for (const g of document.querySelectorAll('#view g.node')) {
        const it = items[g.id], shape = shapeOf(g);
        if (!it || !it.memfill || !shape) continue;
        const row = { id: g.id, fill: shape.getAttribute('fill'), memfill: it.memfill, differs: norm(it.memfill) !== norm(it.fill) };
        if (!best || (row.differs && !best.differs)) best = row;
      }
      return best;
    }, data.items);
    check(res, 'no node in view ' + await viewId(page) + ' has a memfill to check');
    check(res.fill && res.fill.toLowerCase() === res.memfill.toLowerCase(),
      'memory colours: node ' + res.id + ' is filled ' + res.fill + ', not its memfill ' + res.memfill);
    ok('memory colours: node ' + res.id + ' filled with its memfill ' + res.memfill);
  } else {
    ok('memory colours disabled (no memory plan in this graph)');
  }

  await page.screenshot({ path: opts.screenshot });
  ok('screenshot ' + opts.screenshot);
}

try {
  await run();
  if (problem) throw new Failure(problem);
  finished = true;
} catch (err) {
  await fail(err instanceof Failure ? err.message : 'error: ' + (err && err.stack || err));
} finally {
  clearTimeout(overall);
  await cleanup();
}
process.exit(0);
