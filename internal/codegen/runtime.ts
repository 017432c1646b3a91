type Scope = Page | FrameLocator;
type Check = () => Promise<boolean>;
type Outcome = { code: string; when: Check };

// secret reads a secret from the environment when the test runs; its value
// is never written into this file.
function secret(variable: string): string {
  const value = process.env[variable];
  if (value === undefined || value === '') {
    throw new Error('secret ' + variable + ' is not set in the environment');
  }
  return value;
}

// input returns a case's value for an input, or for a sensitive input the
// value of its environment variable.
function input(c: Case, name: string): string {
  const value = c.inputs[name];
  if (value === undefined) {
    throw new Error('case ' + c.name + ': input ' + name + ' has no value');
  }
  return value;
}

// output returns an output extracted by an earlier step.
function output(outputs: Record<string, string>, name: string): string {
  const value = outputs[name];
  if (value === undefined) {
    throw new Error('output ' + name + ' was not extracted');
  }
  return value;
}

// releasedGates are the step ids CUA_RELEASE_GATE names, comma-separated.
function releasedGates(): string[] {
  return (process.env.CUA_RELEASE_GATE ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
}

// guard runs first in a step of GUARDS. A gated step that CUA_RELEASE_GATE
// does not name, or an irreversible one without CUA_ALLOW_IRREVERSIBLE=1,
// fails the test before anything of the step is sent, naming what to set to
// perform it and the guarded steps after it. A step it lets through is
// reported as an effect annotation.
function guard(name: string): void {
  const at = GUARDS.findIndex((g) => g.name === name);
  if (at < 0) {
    throw new Error('step ' + name + ' is not in GUARDS');
  }
  const g = GUARDS[at];
  const gateShut = g.gate && !releasedGates().includes(g.step);
  const irreversible = g.risk !== 'safe' && g.risk !== 'elevated';
  const allowed = process.env.CUA_ALLOW_IRREVERSIBLE === '1';
  const kind = g.risk + (g.gate ? ', gated' : '');
  if (gateShut || (irreversible && !allowed)) {
    const gates: string[] = [];
    let later = false;
    for (const r of GUARDS.slice(at)) {
      if (r.gate && !gates.includes(r.step)) {
        gates.push(r.step);
      }
      later = later || (r.risk !== 'safe' && r.risk !== 'elevated');
    }
    const env = (gates.length > 0 ? ['CUA_RELEASE_GATE=' + gates.join(',')] : []).concat(later ? ['CUA_ALLOW_IRREVERSIBLE=1'] : []);
    const why = gateShut
      ? 'it is gated for human review (GATE_REACHED) and CUA_RELEASE_GATE does not name ' + g.step
      : 'it is irreversible and CUA_ALLOW_IRREVERSIBLE is not 1';
    const stop = 'stopped before step ' + g.name + ' (' + kind + '): ' + why + '; nothing of it was sent. ' +
      'To let this test perform it, set ' + env.join(' ');
    test.info().annotations.push({ type: 'stopped', description: stop });
    throw new Error(stop);
  }
  const by = (g.gate ? ['its gate released by CUA_RELEASE_GATE'] : []).concat(irreversible ? ['allowed by CUA_ALLOW_IRREVERSIBLE=1'] : []);
  test.info().annotations.push({ type: 'effect', description: 'step ' + g.name + ' (' + kind + ') sent' + (by.length > 0 ? ', ' + by.join(', ') : '') });
}

// frame is the document of the iframe with this title.
function frame(scope: Scope, title: string): FrameLocator {
  return scope.getByTitle(title, { exact: true }).contentFrame();
}

// namedFrames finds, for each scope frameNamed made, the frame it stands
// for now.
const namedFrames = new WeakMap<object, () => Frame | null>();

// frameNamed is the document of the frame the capability's scope names by
// its name (the iframe's name attribute), for a frame given no title. The
// page loads its frames after the test starts, so the frame is looked up
// by name among its parent's child frames each time a locator is made in
// it; while it is not on the page, every locator made in it waits on a
// test id that names the missing frame.
function frameNamed(parent: Scope, name: string): FrameLocator {
  const parentFrame = namedFrames.get(parent) ?? (() => (parent as Page).mainFrame());
  const find = (): Frame | null => parentFrame()?.childFrames().find((f) => f.name() === name) ?? null;
  const scope = new Proxy({}, {
    get(_target, key) {
      const f = find();
      if (f === null) {
        const root = (parent as Page).mainFrame?.() ?? parentFrame();
        return () => root!.getByTestId('cua: frame ' + name + ' is not on the page');
      }
      const v = (f as unknown as Record<string | symbol, unknown>)[key];
      return typeof v === 'function' ? v.bind(f) : v;
    },
  }) as FrameLocator;
  namedFrames.set(scope, find);
  return scope;
}

// rowOf is the innermost table row holding the label text.
function rowOf(scope: Scope, label: string): Locator {
  return scope.getByRole('row')
    .filter({ has: scope.getByText(label, { exact: true }) })
    .filter({ hasNot: scope.getByRole('row') });
}

// reEscape quotes text for a regular expression.
function reEscape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\\/]/g, '\\$&');
}

// contains matches text holding this text, case kept, any run of white
// space matching any other.
function contains(text: string): RegExp {
  return new RegExp(reEscape(clean(text)).replace(/ /g, '\\s+'));
}

// exactly matches the whole text, white space aside.
function exactly(text: string): RegExp {
  return new RegExp('^\\s*' + reEscape(text) + '\\s*$');
}

async function present(target: Locator): Promise<boolean> {
  return (await target.count()) > 0;
}

function clean(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function fold(text: string): string {
  return text.toUpperCase().toLowerCase().replace(/[^\p{L}\p{N}\p{M}\s]/gu, '').replace(/\s+/g, ' ').trim();
}

// valueOf is a control's value, or an element's text.
async function valueOf(target: Locator): Promise<string> {
  return await target.evaluate((e) =>
    (e instanceof HTMLInputElement || e instanceof HTMLTextAreaElement || e instanceof HTMLSelectElement)
      ? e.value : ((e as HTMLElement).innerText ?? e.textContent ?? ''));
}

async function hasValue(target: Locator, want: string, mode: string): Promise<boolean> {
  if ((await target.count()) !== 1) {
    return false;
  }
  const got = await valueOf(target);
  switch (mode) {
    case 'normalized':
      return fold(got) === fold(want);
    case 'contains':
      return fold(got).includes(fold(want));
    case 'regex':
      return new RegExp(want).test(clean(got));
  }
  return clean(got) === clean(want);
}

// shape applies an input's transforms, in order, as cua binds it.
function shape(value: string, steps: (string | { format: string })[]): string {
  for (const s of steps) {
    if (typeof s !== 'string') {
      const chars = [...value];
      if (chars.length !== s.format.split('#').length - 1) {
        throw new Error('format ' + s.format + ' takes ' + (s.format.split('#').length - 1) + ' characters, the value has ' + chars.length);
      }
      let i = 0;
      value = [...s.format].map((ch) => (ch === '#' ? chars[i++] : ch)).join('');
    } else if (s === 'trim') {
      value = value.trim();
    } else if (s === 'upper') {
      value = value.toUpperCase();
    } else if (s === 'lower') {
      value = value.toLowerCase();
    } else if (s === 'digits_only') {
      value = value.replace(/[^0-9]/g, '');
    }
  }
  return value;
}

// hasState: the target is exactly one node, whose checked state (a
// checkbox, radio, switch) or selected state (an option, a tab) is as wanted.
async function hasState(target: Locator, state: string): Promise<boolean> {
  if ((await target.count()) !== 1) {
    return false;
  }
  if (state === 'selected') {
    return await target.evaluate((e) =>
      (e instanceof HTMLOptionElement) ? e.selected : e.getAttribute('aria-selected') === 'true');
  }
  return (await target.isChecked()) === (state === 'checked');
}

// settle waits until the expected state holds (true) or a declared business
// outcome does (its code), the outcomes checked first.
async function settle(page: Page, what: string, expected: Check | null, outcomes: Outcome[], timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [seen, holds] = await Promise.all([
      Promise.all(outcomes.map((o) => o.when())),
      expected === null ? Promise.resolve(true) : expected(),
    ]);
    const at = seen.indexOf(true);
    if (at >= 0) {
      return outcomes[at].code;
    }
    if (holds) {
      // The page may have changed between the two checks (an outcome
      // evaluated on the old page, the expectation on the new one): look
      // at the outcomes once more before calling it plain success.
      const again = await Promise.all(outcomes.map((o) => o.when()));
      const late = again.indexOf(true);
      return late >= 0 ? outcomes[late].code : '';
    }
    if (Date.now() > deadline) {
      throw new Error(what + ' did not hold within ' + timeoutMs + ' ms');
    }
    await page.waitForTimeout(100);
  }
}

// The transforms of an extract step, as replay applies them.
const moneyShown = /^(-)?(?:(\$|€|£|¥|[A-Z]{3}) ?)?(-)?([0-9]{1,3}(?:,[0-9]{3})*|[0-9]+)\.([0-9]{2})(?: ?([A-Z]{3}|€|£|¥))?$/;
const currencySymbols: Record<string, string> = { '$': 'USD', '€': 'EUR', '£': 'GBP', '¥': 'JPY' };

function money(text: string, currency: string): string {
  const m = moneyShown.exec(text.trim());
  if (m === null || (m[1] && m[3]) || (m[2] && m[6])) {
    throw new Error(JSON.stringify(text) + ' is not an amount');
  }
  let shown = (m[2] ?? '') + (m[6] ?? '');
  shown = currencySymbols[shown] ?? shown;
  if (currency === '' ? shown !== 'USD' : (shown !== '' && shown !== currency)) {
    throw new Error(JSON.stringify(text) + ' is not an amount in ' + (currency || 'USD'));
  }
  const whole = m[4].replace(/,/g, '').replace(/^0+/, '') || '0';
  const sign = (m[1] || m[3]) && !(whole === '0' && m[5] === '00') ? '-' : '';
  return sign + whole + '.' + m[5];
}

function date(text: string): string {
  const t = text.trim();
  let y = 0, mo = 0, d = 0;
  let m = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/.exec(t);
  if (m !== null) {
    [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  } else if ((m = /^([0-9]{1,2})\/([0-9]{1,2})\/([0-9]{4})$/.exec(t)) !== null) {
    [y, mo, d] = [Number(m[3]), Number(m[1]), Number(m[2])];
  } else {
    throw new Error(JSON.stringify(text) + ' is not a date');
  }
  const at = new Date(Date.UTC(y, mo - 1, d));
  if (at.getUTCFullYear() !== y || at.getUTCMonth() !== mo - 1 || at.getUTCDate() !== d) {
    throw new Error(JSON.stringify(text) + ' is not a date');
  }
  return at.toISOString().slice(0, 10);
}

function capture(text: string, pattern: string): string {
  const m = new RegExp(pattern).exec(text);
  if (m === null || m.length !== 2) {
    throw new Error(JSON.stringify(text) + ' does not match ' + pattern);
  }
  return m[1].trim();
}

function stripPrefix(text: string, prefix: string): string {
  const s = text.trim();
  const words = prefix.toLowerCase().split(/\s+/).filter((w) => w !== '');
  if (words.length === 0) {
    return s;
  }
  let rest = s;
  for (let k = 0; k < words.length; k++) {
    if (k > 0) {
      const t = rest.replace(/^[ \t\n\r\u00a0]+/, '');
      if (t === rest) {
        return s;
      }
      rest = t;
    }
    if (rest.slice(0, words[k].length).toLowerCase() !== words[k]) {
      return s;
    }
    rest = rest.slice(words[k].length);
  }
  const word = /[\p{L}\p{N}]/u;
  if (word.test(prefix.slice(-1)) && word.test(rest.charAt(0))) {
    return s;
  }
  return rest.replace(/^[ \t\n\r\u00a0:\-–—]+/, '');
}

// typed gives a value cut from its label its output type's canonical form.
function typed(kind: string, currency: string, text: string): string {
  switch (kind) {
    case 'money':
      return money(text, currency);
    case 'date':
      return date(text);
  }
  return text;
}

// expectOutput asserts an output by its type, enum and pattern; a
// sensitive output's value is never printed.
function expectOutput(name: string, value: string | undefined, kind: string, allowed: string[], pattern: string, sensitive: boolean): void {
  const show = sensitive ? '(sensitive, not shown)' : JSON.stringify(value);
  expect(value !== undefined && value !== '', 'output ' + name + ' is extracted').toBe(true);
  const v = value as string;
  switch (kind) {
    case 'money':
      expect(/^-?[0-9]+\.[0-9]{2}$/.test(v), 'output ' + name + ' ' + show + ' is an amount').toBe(true);
      break;
    case 'date':
      expect(date(v) === v, 'output ' + name + ' ' + show + ' is a date').toBe(true);
      break;
    case 'integer':
      expect(/^-?[0-9]+$/.test(v), 'output ' + name + ' ' + show + ' is an integer').toBe(true);
      break;
    case 'number':
      expect(/^-?[0-9]+(\.[0-9]+)?$/.test(v), 'output ' + name + ' ' + show + ' is a number').toBe(true);
      break;
    case 'boolean':
      expect(v === 'true' || v === 'false', 'output ' + name + ' ' + show + ' is true or false').toBe(true);
      break;
  }
  if (allowed.length > 0) {
    expect(allowed.includes(v), 'output ' + name + ' ' + show + ' is one of ' + allowed.join(', ')).toBe(true);
  }
  if (pattern !== '') {
    expect(new RegExp('^(?:' + pattern + ')$').test(v), 'output ' + name + ' ' + show + ' matches ' + pattern).toBe(true);
  }
}
