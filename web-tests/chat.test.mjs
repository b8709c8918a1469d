// The web chat in a real Chromium (Debian's, driven by playwright-core) against a real four-server federation:
// alice on s1+s2, bob on s4+s3. Screenshots of each state go to target/web-screenshots/.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';
import { Federation, ROOT, SCHEDULE_MS, keygen } from './federation.mjs';

const RUN_DIR = join(ROOT, 'target', 'web-tests');
const SHOTS = join(ROOT, 'target', 'web-screenshots');
const CHROMIUM = process.env.SHINE_CHROMIUM || '/usr/bin/chromium';
const WAIT = 30000;

let federation;
let browser;
const problems = [];

before(async () => {
  rmSync(RUN_DIR, { recursive: true, force: true });
  rmSync(SHOTS, { recursive: true, force: true });
  mkdirSync(SHOTS, { recursive: true });
  federation = await Federation.start(RUN_DIR);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});

after(async () => {
  await browser?.close();
  await federation?.stop();
});

async function newPage(context, server) {
  const page = await context.newPage();
  page.on('console', (message) => {
    // a refused WebSocket while its server is down is the outage the test makes, not a fault of the page
    if (message.type() === 'error' && !/WebSocket connection to .* failed/.test(message.text())) {
      problems.push(`${server}: ${message.text()}`);
    }
  });
  page.on('pageerror', (error) => problems.push(`${server}: ${error.message}`));
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (!['127.0.0.1', 'blob:'].includes(url.hostname) && url.protocol !== 'blob:' && url.protocol !== 'data:') {
      problems.push(`${server}: request outside the server: ${request.url()}`);
    }
  });
  await page.goto(`${federation.http(server)}/app`);
  return page;
}

const message = (page, text) => page.locator('li[data-message-key]', { hasText: text });

async function expectState(page, text, state, timeout = WAIT) {
  await page.waitForFunction(([t, s]) => [...document.querySelectorAll('li[data-message-key]')]
    .some((li) => li.querySelector('.text')?.textContent === t && li.dataset.state === s), [text, state], { timeout });
}

async function shot(page, name) {
  await page.screenshot({ path: join(SHOTS, `${name}.png`) });
}

/** One message bubble with its indicator (the README shows these). */
async function tickShot(page, text, state) {
  await message(page, text).screenshot({ path: join(SHOTS, `tick-${state}.png`) });
}

async function importAndRegister(page, keyFile, second) {
  await page.getByLabel('Import key').setInputFiles(keyFile);
  await page.getByRole('button', { name: 'Register' }).waitFor({ timeout: WAIT });
  await page.getByLabel('Second access server (optional): its serverLogin').fill(second);
  await page.getByLabel('and its WebSocket URL').fill(federation.url(second));
  await page.getByRole('button', { name: 'Register' }).click();
  await page.getByLabel('Chat with').waitFor({ timeout: WAIT });
  await page.waitForFunction(() => document.getElementById('banner').textContent === '', null, { timeout: WAIT });
}

test('/app is served with a strict Content-Security-Policy and no inline script', async () => {
  const response = await fetch(`${federation.http('s1')}/app/`);
  assert.equal(response.status, 200);
  const csp = response.headers.get('content-security-policy');
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.match(csp, /connect-src 'self'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  const html = await response.text();
  assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'every script comes from a file');
  assert.doesNotMatch(html, /\sstyle=|<style/, 'no inline style');
  assert.equal((await fetch(`${federation.http('s1')}/app`, { redirect: 'manual' })).status, 302);
});

test('two people chat across four servers with the seed\'s ticks', async () => {
  try {
    await chat();
  } catch (e) {
    // what each page showed when it failed, and what the pages reported
    let n = 0;
    for (const context of browser.contexts()) {
      for (const page of context.pages()) {
        await page.screenshot({ path: join(SHOTS, `failure-${n++}.png`) }).catch(() => {});
      }
    }
    e.message += `\npage problems: ${JSON.stringify(problems)}`;
    throw e;
  }
});

async function chat() {
  const aliceKey = keygen(join(RUN_DIR, 'alice.key'), 'alice');
  const bobKey = keygen(join(RUN_DIR, 'bob.key'), 'bob');
  const alice = await browser.newContext({ viewport: { width: 1000, height: 700 } });
  const bob = await browser.newContext({ viewport: { width: 390, height: 760 }, colorScheme: 'dark' });

  // keys made by keygen, imported in the browser, cards published from the page
  const a1 = await newPage(alice, 's1');
  await importAndRegister(a1, aliceKey, 's2');
  const b4 = await newPage(bob, 's4');
  await importAndRegister(b4, bobKey, 's3');

  // a login nobody has is said at once and opens no chat; the login stays in the field to be corrected
  await a1.getByLabel('Chat with').fill('nobody-here');
  await a1.getByLabel('Chat with').press('Enter');
  await a1.waitForFunction(() => document.getElementById('open-error').textContent
    .includes('nobody-here is not registered on this server'), null, { timeout: WAIT });
  assert.equal(await a1.getByLabel('Chat with').inputValue(), 'nobody-here');

  // GIVEN bob's servers are down, WHEN alice writes to bob THEN one grey tick: her server accepted it
  await federation.stopOne('s3');
  await federation.stopOne('s4');
  await a1.getByLabel('Chat with').fill('bob');
  await a1.getByLabel('Chat with').press('Enter');
  assert.equal(await a1.getByLabel('Message').count(), 1, 'one element is labelled Message');
  await a1.getByLabel('Message').fill('hello bob');
  await a1.getByRole('button', { name: 'Send' }).click();
  await expectState(a1, 'hello bob', 'accepted');
  assert.equal(await message(a1, 'hello bob').locator('.tick').getAttribute('aria-label'),
    'Sent: accepted by your server');
  await shot(a1, '1-accepted');
  await tickShot(a1, 'hello bob', 'accepted');
  await b4.waitForFunction(() => document.getElementById('banner').textContent !== '', null, { timeout: WAIT });
  await shot(b4, '1-bob-offline-banner');

  // WHEN one of bob's servers returns THEN one light tick, pushed as DmDeliveryStateChanged
  await federation.startOne('s4');
  await expectState(a1, 'hello bob', 'delivered');
  await shot(a1, '2-delivered');
  await tickShot(a1, 'hello bob', 'delivered');

  // WHEN bob opens the chat (his page reconnects by itself) THEN alice sees two ticks
  const bobsChat = b4.locator('button[data-peer="alice"]');
  await bobsChat.waitFor({ timeout: WAIT });
  assert.match(await bobsChat.textContent(), /1/);
  await bobsChat.click();
  await message(b4, 'hello bob').waitFor({ timeout: WAIT });
  await expectState(a1, 'hello bob', 'read');
  assert.equal(await message(a1, 'hello bob').locator('.tick').getAttribute('aria-label'), 'Read');
  await shot(a1, '3-read');
  await tickShot(a1, 'hello bob', 'read');
  await shot(b4, '3-bob-phone-dark');

  // a second tab of alice, on her other server, shows the message and its ticks, and what the first tab sends next
  const a2 = await newPage(alice, 's2');
  await a2.getByLabel('Import key').setInputFiles(aliceKey); // another origin, so another key store
  await a2.locator('button[data-peer="bob"]').click({ timeout: WAIT });
  await expectState(a2, 'hello bob', 'read');
  await a1.getByLabel('Message').fill('second one');
  await a1.getByLabel('Message').press('Enter');
  // bob has the chat open, so it is read at once
  await expectState(a1, 'second one', 'read');
  await expectState(a2, 'second one', 'read');
  await shot(a2, '4-second-tab');

  // an edit reaches the other side with the "edited" mark
  a1.once('dialog', (dialog) => dialog.accept('hello bob, edited'));
  await message(a1, 'hello bob').getByRole('button', { name: 'Edit' }).click();
  await message(b4, 'hello bob, edited').locator('.edited').waitFor({ timeout: WAIT });
  await message(a1, 'hello bob, edited').locator('.edited').waitFor({ timeout: WAIT });
  await shot(b4, '5-bob-sees-edit');

  // a delete removes it on the author's servers (both), not from bob's copy
  await message(a1, 'second one').getByRole('button', { name: 'Delete' }).click();
  await message(a1, 'second one').waitFor({ state: 'detached', timeout: WAIT });
  const deadline = Date.now() + WAIT;
  for (;;) {
    await a2.reload();
    await a2.locator('button[data-peer="bob"]').click({ timeout: WAIT });
    await message(a2, 'hello bob, edited').waitFor({ timeout: WAIT });
    if (await message(a2, 'second one').count() === 0) {
      break;
    }
    assert.ok(Date.now() < deadline, 'the delete reached alice\'s second server');
    await a2.waitForTimeout(500);
  }
  assert.equal(await message(b4, 'second one').count(), 1, 'bob keeps his copy');

  // WHEN bob's servers stay down through the whole (compressed) schedule THEN the red "!" and its text
  await federation.stopOne('s4');
  await a1.getByLabel('Message').fill('anyone there?');
  await a1.getByRole('button', { name: 'Send' }).click();
  await expectState(a1, 'anyone there?', 'accepted');
  await expectState(a1, 'anyone there?', 'failed', SCHEDULE_MS[SCHEDULE_MS.length - 1] + WAIT);
  assert.match(await message(a1, 'anyone there?').textContent(), /Message not delivered/);
  await shot(a1, '6-failed');
  await tickShot(a1, 'anyone there?', 'failed');

  // WHEN alice's own server is down THEN a banner, and what she writes waits as pending until it is back
  await federation.stopOne('s1');
  await a1.waitForFunction(() => document.getElementById('banner').textContent !== '', null, { timeout: WAIT });
  await a1.getByLabel('Message').fill('written offline');
  await a1.getByRole('button', { name: 'Send' }).click();
  await expectState(a1, 'written offline', 'pending');
  await shot(a1, '7-pending-offline');
  await tickShot(a1, 'written offline', 'pending');
  await federation.startOne('s1');
  await expectState(a1, 'written offline', 'accepted');

  // reopening shows the same states, from GetDirectMessages
  await a1.reload();
  await a1.locator('button[data-peer="bob"]').click({ timeout: WAIT });
  await expectState(a1, 'hello bob, edited', 'read');
  await expectState(a1, 'anyone there?', 'failed');
  await expectState(a1, 'written offline', 'accepted');
  await shot(a1, '8-reopened');

  // keyboard only: Tab reaches the composer, typing and Enter send
  await a1.getByLabel('Message').focus();
  await a1.keyboard.type('by keyboard');
  await a1.keyboard.press('Enter');
  await message(a1, 'by keyboard').waitFor({ timeout: WAIT });

  assert.deepEqual(problems, [], 'no script errors, CSP violations or requests outside the server');
  await alice.close();
  await bob.close();
}

test('a key made in the browser is exported in the keygen format and works with the Java client', async () => {
  const context = await browser.newContext({ acceptDownloads: true });
  const page = await newPage(context, 's1');
  await page.getByLabel('Login', { exact: true }).fill('carol');
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByRole('button', { name: 'Register' }).click();
  await page.getByLabel('Chat with').waitFor({ timeout: WAIT });
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Export key' }).click(),
  ]);
  const keyFile = join(RUN_DIR, 'carol.key');
  await download.saveAs(keyFile);
  const exported = JSON.parse(readFileSync(keyFile, 'utf8'));
  assert.equal(exported.login, 'carol');
  assert.equal(Buffer.from(exported.privateKeyB64, 'base64').length, 32);
  // the Java client reads the file and the server verifies what it signs against the card the browser published
  const sent = JSON.parse(execFileSync('java', ['-jar', join(ROOT, 'target', 'shine-server.jar'), 'client', 'send',
    '--key', keyFile, '--server', federation.url('s1'), '--to', 'alice', '--text', 'from the CLI', '--json'],
  { encoding: 'utf8' }).trim().split('\n').pop());
  assert.equal(sent.deliveryState, 'delivered');
  assert.deepEqual(problems, []);
  await context.close();
});
