// The web chat verifies what its server hands it (PROTOCOL §13 "Clients verify") and says plainly when the server
// refuses the key — in a real Chromium against a real server (s1) from the fat jar. Screenshots go to
// target/web-screenshots/verify-*.png.
import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { chromium } from 'playwright-core';
import { Federation, ROOT, chooseFile, keygen } from './federation.mjs';
import { Witness } from './witness.mjs';

const RUN_DIR = join(ROOT, 'target', 'web-tests-verify');
const SHOTS = join(ROOT, 'target', 'web-screenshots');
const CHROMIUM = process.env.SHINE_CHROMIUM || '/usr/bin/chromium';
const WAIT = 30000;

let federation;
let browser;
const problems = [];
const witness = new Witness({
  browser: () => browser, federation: () => federation, runDir: RUN_DIR, shots: SHOTS, problems,
});

before(async () => {
  rmSync(RUN_DIR, { recursive: true, force: true });
  mkdirSync(SHOTS, { recursive: true });
  // s2 only to be a server that knows alice's card without being her access server (421)
  federation = await Federation.start(RUN_DIR, ['s1', 's2']);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});

after(async () => {
  await browser?.close();
  await federation?.stop();
});

async function newPage(context, server = 's1') {
  const page = await context.newPage();
  witness.watch(page, server);
  page.on('console', (message) => {
    if (message.type() === 'error') {
      problems.push(message.text());
    }
  });
  page.on('pageerror', (error) => problems.push(error.message));
  await page.goto(`${federation.http(server)}/app`);
  return page;
}

/** Imports a keygen file and registers its login on s1 alone. */
async function importAndRegister(page, keyFile) {
  await chooseFile(page.getByLabel('Import key'), keyFile);
  await page.getByRole('button', { name: 'Register' }).click({ timeout: WAIT });
  await page.getByLabel('Chat with').waitFor({ timeout: WAIT });
  await page.getByText(/^Signed in as /).waitFor({ timeout: WAIT });
}

/** Counts the AuthLogin requests a page sends (each one a login try). */
function countLogins(page) {
  const counter = { logins: 0 };
  page.on('websocket', (ws) => ws.on('framesent', (frame) => {
    if (typeof frame.payload === 'string' && frame.payload.includes('"op":"AuthLogin"')) {
      counter.logins++;
    }
  }));
  return counter;
}

witness.test('a message changed in the server\'s database is shown as not verified, never as its text (nor is any text there)', async () => {
  const aliceKey = keygen(join(RUN_DIR, 'alice.key'), 'alice');
  const bobKey = keygen(join(RUN_DIR, 'bob.key'), 'bob');
  const alice = await newPage(await browser.newContext());
  await importAndRegister(alice, aliceKey);
  const bobContext = await browser.newContext();
  const bob = await newPage(bobContext);
  await importAndRegister(bob, bobKey);

  await alice.getByLabel('Chat with').fill('bob');
  await alice.getByLabel('Chat with').press('Enter');
  for (const text of ['genuine words', 'pay carol 10']) {
    await alice.getByLabel('Message').fill(text);
    await alice.getByRole('button', { name: 'Send' }).click();
    await alice.waitForFunction((t) => [...document.querySelectorAll('li[data-message-key]')]
      .some((li) => li.querySelector('.text')?.textContent === t && ['delivered', 'read'].includes(li.dataset.state)),
    text, { timeout: WAIT });
  }

  // the server holds no words of theirs: each copy is sealed to its owner's encryption key
  assert.equal(federation.sql('s1', 'SELECT count(*) FROM dm_message WHERE position(convert_to(\'carol 10\', '
    + '\'UTF8\') in blob) > 0 OR position(convert_to(\'carol 10\', \'UTF8\') in coalesce(pair_blob, \'\')) > 0')
    .trim(), '0');
  // WHEN the server's copy of bob's second message is changed (four characters of its ciphertext)
  assert.equal(federation.sql('s1', 'UPDATE dm_message SET blob = overlay(blob placing convert_to(\'AAAA\', \'UTF8\')'
    + ' from position(convert_to(\'"ctB64":"\', \'UTF8\') in blob) + 9) WHERE owner = \'bob\''
    + ' AND created_at_ms = (SELECT max(created_at_ms) FROM dm_message WHERE owner = \'bob\') RETURNING 1').trim(), '1');

  // THEN bob, opening the chat afresh, sees it marked as not verified, and the genuine one as it was
  await bob.reload();
  await bob.locator('button[data-peer="alice"]').click({ timeout: WAIT });
  const marked = bob.locator('li[data-verified="false"]');
  await marked.waitFor({ timeout: WAIT });
  assert.equal(await marked.count(), 1);
  assert.equal(await marked.locator('.text').textContent(),
    'Not verified — this message is not signed by alice\'s key');
  assert.equal(await marked.getAttribute('data-state'), 'not-verified');
  await bob.locator('li[data-verified="true"]', { hasText: 'genuine words' }).waitFor({ timeout: WAIT });
  const shown = await bob.locator('#messages').textContent();
  assert.doesNotMatch(shown, /carol 99|carol 10/, 'the changed words are never shown');
  assert.match(await bob.locator('button[data-peer="alice"] .last').textContent(), /^Not verified/,
    'the chat list does not show the changed words either');
  await marked.screenshot({ path: join(SHOTS, 'verify-not-verified.png') });
  assert.deepEqual(problems, []);
  await bobContext.close();
});

witness.test('a key file of another key for an existing login: "This key is not alice\'s key on this server", no retries,'
  + ' and the user can import the right key or sign out', async () => {
  const aliceKey = join(RUN_DIR, 'alice.key'); // registered by the test above
  const impostor = keygen(join(RUN_DIR, 'impostor-alice.key'), 'alice');
  const context = await browser.newContext();
  const page = await newPage(context);
  const counter = countLogins(page);

  await chooseFile(page.getByLabel('Import key'), impostor);
  await page.getByText('This key is not alice\'s key on this server.').waitFor({ timeout: WAIT });
  assert.equal(await page.locator('#me').textContent(), 'Not signed in');
  assert.equal(await page.locator('#chat').isHidden(), true);
  await page.screenshot({ path: join(SHOTS, 'verify-wrong-key.png') });
  // the old page tried again every 0.25-8 s and said "Offline: reconnecting"; this one waits for the user
  await page.waitForTimeout(3000);
  assert.equal(counter.logins, 1, 'one login try, no reconnection loop');
  assert.equal(await page.locator('#banner').textContent(), '');

  // the right key: signed in
  await chooseFile(page.getByLabel('Import another key'), aliceKey);
  await page.getByText('Signed in as alice').waitFor({ timeout: WAIT });
  assert.equal(await page.locator('#refused').isHidden(), true);
  assert.equal(counter.logins, 2);

  assert.deepEqual(problems, []);
  await context.close();

  // a fresh browser with the wrong key: Sign out forgets it and goes back to the start
  const fresh = await browser.newContext();
  const other = await newPage(fresh);
  await chooseFile(other.getByLabel('Import key'), impostor);
  await other.getByText('This key is not alice\'s key on this server.').waitFor({ timeout: WAIT });
  await other.getByRole('button', { name: 'Sign out' }).click();
  await other.getByRole('button', { name: 'Create key' }).waitFor({ timeout: WAIT });
  await other.reload();
  await other.getByRole('button', { name: 'Create key' }).waitFor({ timeout: WAIT });
  assert.equal(await other.locator('#me').textContent(), '');
  assert.deepEqual(problems, []);
  await fresh.close();
});

witness.test('a refused login whose card lookup meets a socket that closes, or one that never answers, still says why'
  + ' (the lookup ends: no hang)', async () => {
  const impostor = join(RUN_DIR, 'impostor-alice.key'); // made by the test above
  for (const lookup of ['closed', 'silent']) {
    const context = await browser.newContext();
    let sockets = 0;
    // the page's session socket goes to s1 itself; its card lookup after the refusal meets a server that closes the
    // socket on the request, or one that reads it and never answers
    await context.routeWebSocket(/\/ws$/, (ws) => {
      if (++sockets === 1) {
        ws.connectToServer();
      } else if (lookup === 'closed') {
        ws.onMessage(() => ws.close({ code: 1011, reason: 'gone' }));
      } else {
        ws.onMessage(() => {});
      }
    });
    const page = await newPage(context);
    await chooseFile(page.getByLabel('Import key'), impostor);
    // with no card to look at, the refusal is said as the server gave it, never guessed as "not your key"
    await page.getByText(/^The server refused to sign you in as alice\. /).waitFor({ timeout: WAIT });
    assert.equal(await page.getByText('This key is not alice\'s key on this server.').count(), 0);
    assert.equal(sockets, 2, 'the session socket and one lookup');
    assert.equal(await page.locator('#me').textContent(), 'Not signed in');
    await context.close();
  }
  assert.deepEqual(problems, []);
});

witness.test('a key file for a login this server does not know: "register first"', async () => {
  const stranger = keygen(join(RUN_DIR, 'stranger.key'), 'stranger');
  const context = await browser.newContext();
  const page = await newPage(context);
  const counter = countLogins(page);
  await chooseFile(page.getByLabel('Import key'), stranger);
  await page.getByText('There is no user stranger on this server: register first.').waitFor({ timeout: WAIT });
  await page.getByRole('button', { name: 'Register' }).waitFor();
  await page.waitForTimeout(2000);
  assert.equal(counter.logins, 1, 'one login try, no reconnection loop');
  assert.equal(await page.locator('#banner').textContent(), '');
  await context.close();
});

witness.test('a key file for a login served by other servers: "register here again", one login try, no reconnection loop',
  async () => {
    const context = await browser.newContext();
    const page = await newPage(context, 's2'); // s2 has alice's card (relayed by s1) but is not her access server
    const counter = countLogins(page);
    await chooseFile(page.getByLabel('Import key'), join(RUN_DIR, 'alice.key'));
    await page.getByText('This server is not one of alice\'s access servers').waitFor({ timeout: WAIT });
    await page.getByRole('button', { name: 'Register' }).waitFor();
    await page.waitForTimeout(3000);
    assert.equal(counter.logins, 1, 'one login try');
    assert.equal(await page.locator('#banner').textContent(), '');
    assert.equal(await page.locator('#me').textContent(), 'Not signed in');
    assert.deepEqual(problems, []);
    await context.close();
  });

witness.test('a key made here for a login someone else has: registration says so in plain words and signs nothing in',
  async () => {
    const context = await browser.newContext();
    const page = await newPage(context);
    const counter = countLogins(page);
    await page.getByLabel('Login', { exact: true }).fill('alice');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('button', { name: 'Register' }).click();
    await page.getByText('The login alice is already taken on this server by another key. Choose another login, or '
      + 'import that login\'s key file if it is yours.').waitFor({ timeout: WAIT });
    assert.equal(counter.logins, 0);
    assert.equal(await page.locator('#banner').textContent(), '');
    // a login that breaks the rule is said before anything is made
    await page.getByLabel('Login', { exact: true }).fill('Alice Smith');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText(/^A login is 1 to 32 characters/).waitFor({ timeout: WAIT });
    assert.deepEqual(problems, []);
    await context.close();
  });

witness.test('before the modules run the page says it is loading; without JavaScript it says the chat needs it', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  await page.route('**/app/app.js', async (route) => {
    await held;
    await route.continue();
  });
  // a module script holds DOMContentLoaded back: what is on screen meanwhile is what the user sees
  await page.goto(`${federation.http('s1')}/app/`, { waitUntil: 'commit' });
  const loading = page.getByText('Loading the chat…');
  await loading.waitFor({ timeout: WAIT });
  const [header, text] = await Promise.all([page.locator('header').boundingBox(), loading.boundingBox()]);
  assert.ok(text.y >= header.y + header.height, 'under the header');
  assert.equal(await page.locator('noscript p').count(), 0, 'with JavaScript on, noscript holds no elements');
  release();
  await page.getByRole('button', { name: 'Create key' }).waitFor({ timeout: WAIT });
  assert.equal(await loading.isVisible(), false, 'the app replaces it');
  await context.close();

  const noScript = await browser.newContext({ javaScriptEnabled: false });
  const bare = await noScript.newPage();
  await bare.goto(`${federation.http('s1')}/app/`);
  const noscript = bare.locator('noscript p'); // Playwright's text search skips noscript
  assert.equal(await noscript.isVisible(), true);
  assert.equal(await noscript.textContent(), 'This chat needs JavaScript: turn it on for this site and reload the page.');
  assert.equal(await bare.getByText('Loading the chat…').isVisible(), false);
  await bare.screenshot({ path: join(SHOTS, 'verify-noscript.png') });
  await noScript.close();
});

witness.test('typing in "Chat with" while a chat is still opening keeps the focus there, and its Enter opens that chat',
  async () => {
    const [gina, hal, ivy] = ['gina', 'hal', 'ivy'].map((login) => keygen(join(RUN_DIR, `${login}.key`), login));
    // gina's page talks to s1 through a route that can hold back the answer of a chat's page (GetDirectMessages)
    const context = await browser.newContext();
    let holding = false;
    let heldOne;
    const held = new Promise((resolve) => { heldOne = resolve; });
    let release;
    const released = new Promise((resolve) => { release = resolve; });
    await context.routeWebSocket(/\/ws$/, (ws) => {
      const server = ws.connectToServer();
      server.onMessage(async (frame) => {
        if (holding && typeof frame === 'string' && frame.includes('"op":"GetDirectMessages"')) {
          holding = false;
          heldOne();
          await released;
        }
        ws.send(frame);
      });
    });
    const g = await newPage(context);
    await importAndRegister(g, gina);
    const others = await browser.newContext();
    const h = await newPage(others);
    await importAndRegister(h, hal);
    const third = await browser.newContext();
    await importAndRegister(await newPage(third), ivy);
    await h.getByLabel('Chat with').fill('gina');
    await h.getByLabel('Chat with').press('Enter');
    await h.getByLabel('Message').fill('hello gina');
    await h.getByLabel('Message').press('Enter');
    await g.locator('button[data-peer="hal"]').waitFor({ timeout: WAIT });

    // WHEN gina opens hal's chat and, while its messages are on their way, types the next login in "Chat with"
    holding = true;
    await g.getByLabel('Chat with').fill('hal');
    await g.getByLabel('Chat with').press('Enter');
    await g.getByRole('heading', { name: 'hal' }).waitFor({ timeout: WAIT });
    await held;
    await g.getByLabel('Chat with').fill('ivy');
    release();
    await g.locator('li[data-message-key]', { hasText: 'hello gina' }).waitFor({ timeout: WAIT });

    // THEN the chat that came does not take the focus from where she types, and her Enter (a key press, no click)
    // opens ivy's chat
    assert.equal(await g.evaluate(() => document.activeElement?.id), 'chat-with');
    await g.keyboard.press('Enter');
    await g.getByRole('heading', { name: 'ivy' }).waitFor({ timeout: WAIT });
    assert.deepEqual(problems, []);
    for (const each of [context, others, third]) {
      await each.close();
    }
  });
