// pwworker is the Playwright side of cua's replay benchmark: a long-lived
// worker that drives one Chromium (Debian's /usr/bin/chromium, never a
// downloaded build) through playwright-core and does the reference lookup of
// MemberDesk with getByRole locators inside the frames, one lookup per
// command, so that the Go driver (bench/cmd/benchrun) can interleave it with
// cua's engine and the bare-CDP floor in one run.
//
// Protocol: one JSON object per line on stdin, one JSON reply per line on
// stdout.
//
//	{"op":"init","base":URL,"exec":PATH,"args":[FLAGS],"operator":ID,"password":PW}
//	    launches Chromium, opens one isolated context and signs on once
//	{"op":"lookup","member":"12345"}
//	    one lookup; the reply carries "ms" (measured in this process, around
//	    the lookup only) and the raw texts read from the page
//	{"op":"stay_init"}
//	    opens Member Search once and stays there (after init)
//	{"op":"stay_lookup","member":"12345"}
//	    one lookup of the "stay on the page" loop, as a hand-written
//	    Playwright script does it: fill the member number, click Search, read
//	    the row values, click Member Search to be back on the search page.
//	    "ms" is the search and read, "back_ms" the way back; a loop's
//	    lookup costs both
//	{"op":"quit"}
//
// Every reply is {"ok":true,...} or {"ok":false,"error":TEXT}.
import { chromium } from 'playwright-core';
import { createInterface } from 'node:readline';
import { performance } from 'node:perf_hooks';

let browser;
let page;
let base;

const exact = (name) => ({ name, exact: true });

async function init(cmd) {
  base = cmd.base.replace(/\/+$/, '');
  browser = await chromium.launch({
    executablePath: cmd.exec || '/usr/bin/chromium',
    headless: true,
    args: cmd.args || [],
  });
  const context = await browser.newContext();
  page = await context.newPage();
  const t0 = performance.now();
  await page.goto(base + '/');
  const content = page.frameLocator('iframe[name="content"]');
  await content.getByRole('textbox', exact('Operator ID')).fill(cmd.operator);
  await content.getByLabel('Password', { exact: true }).fill(cmd.password);
  await content.getByRole('button', exact('Sign on')).click();
  await content.getByRole('heading', exact('Welcome')).waitFor();
  return { ms: performance.now() - t0 };
}

// The value cell of the row whose label cell is label. MemberDesk nests its
// data table in layout tables, so the outer rows contain every label too: the
// data row is the one whose accessible name starts with the label.
function valueOf(content, label) {
  const re = new RegExp('^' + label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '\\s');
  return content.getByRole('row', { name: re }).getByRole('cell').nth(1).textContent();
}

async function lookup(cmd) {
  const t0 = performance.now();
  await page.goto(base + '/');
  const nav = page.frameLocator('iframe[name="nav"]');
  const content = page.frameLocator('iframe[name="content"]');
  await nav.getByRole('link', exact('Member Search')).click();
  await content.getByRole('textbox', exact('Member number')).fill(cmd.member);
  await content.getByRole('button', exact('Search')).click();
  await content.getByRole('heading', exact('Member Details')).waitFor();
  const [status, balance, asOf] = await Promise.all([
    valueOf(content, 'Status'),
    valueOf(content, 'Savings Balance'),
    valueOf(content, 'As of'),
  ]);
  const ms = performance.now() - t0;
  return { ms, outputs: { status: status.trim(), savings_balance: balance.trim(), as_of: asOf.trim() } };
}

async function stayInit() {
  const t0 = performance.now();
  await page.goto(base + '/');
  await page.frameLocator('iframe[name="nav"]').getByRole('link', exact('Member Search')).click();
  await page.frameLocator('iframe[name="content"]').getByRole('textbox', exact('Member number')).waitFor();
  return { ms: performance.now() - t0 };
}

async function stayLookup(cmd) {
  const nav = page.frameLocator('iframe[name="nav"]');
  const content = page.frameLocator('iframe[name="content"]');
  const t0 = performance.now();
  await content.getByRole('textbox', exact('Member number')).fill(cmd.member);
  await content.getByRole('button', exact('Search')).click();
  await content.getByRole('heading', exact('Member Details')).waitFor();
  const [status, balance, asOf] = await Promise.all([
    valueOf(content, 'Status'),
    valueOf(content, 'Savings Balance'),
    valueOf(content, 'As of'),
  ]);
  const t1 = performance.now();
  await nav.getByRole('link', exact('Member Search')).click();
  await content.getByRole('textbox', exact('Member number')).waitFor();
  const t2 = performance.now();
  return {
    ms: t1 - t0,
    back_ms: t2 - t1,
    outputs: { status: status.trim(), savings_balance: balance.trim(), as_of: asOf.trim() },
  };
}

const ops = { init, lookup, stay_init: stayInit, stay_lookup: stayLookup };

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
const reply = (o) => process.stdout.write(JSON.stringify(o) + '\n');

for await (const line of rl) {
  if (!line.trim()) continue;
  let cmd;
  try {
    cmd = JSON.parse(line);
  } catch (e) {
    reply({ ok: false, error: 'bad command: ' + e.message });
    continue;
  }
  if (cmd.op === 'quit') break;
  const fn = ops[cmd.op];
  if (!fn) {
    reply({ ok: false, error: 'unknown op ' + cmd.op });
    continue;
  }
  try {
    reply({ ok: true, ...(await fn(cmd)) });
  } catch (e) {
    reply({ ok: false, error: String(e && e.message ? e.message : e).split('\n')[0] });
  }
}
if (browser) await browser.close();
