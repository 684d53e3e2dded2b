/** The web view's server on the SM's clock (#31: one clock per process): its pushes and
 * heartbeats are timed by the clock it is given, not by Date.now and setTimeout. Driven here by a
 * VirtualClock with intervals of an hour and a day: on the wall clock the second push and the
 * heartbeat would never come within the test. */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../src/util/clock.js';
import { parseListenAddress } from '../src/util/listen.js';
import { serveWeb } from '../src/web/server.js';
import type { WebFeed } from '../src/web/feed.js';

describe('web view server clock', () => {
  it('pushes at most once per pushIntervalMs and beats every heartbeatMs of the injected clock', async () => {
    const clock = new VirtualClock();
    clock.advance(10_000);
    let changed = (): void => undefined;
    const feed = { version: 1, onChange: (fn: () => void) => ((changed = fn), () => undefined), state: () => ({}) };
    const hour = 3_600_000;
    const day = 86_400_000;
    const web = await serveWeb(feed as unknown as WebFeed, parseListenAddress('127.0.0.1:0'), { clock, pushIntervalMs: hour, heartbeatMs: day });
    const res = await fetch(web.url + 'api/events');
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    let text = '';
    const read = async (until: RegExp): Promise<void> => {
      while (!until.test(text)) text += dec.decode((await reader.read()).value);
    };
    try {
      await read(/data: \{"version":1\}/);
      // the first change is pushed at once (no push yet)
      feed.version = 2;
      changed();
      clock.advance(0);
      await read(/data: \{"version":2\}/);
      // the next waits for an hour of the clock since that push
      feed.version = 3;
      changed();
      clock.advance(hour - 1);
      expect((await fetch(web.url + 'api/state')).status).toBe(200);
      expect(text).not.toMatch(/"version":3/);
      clock.advance(1);
      await read(/data: \{"version":3\}/);
      expect(text).not.toMatch(/: alive/);
      clock.advance(day);
      await read(/: alive\n\n/);
    } finally {
      await reader.cancel();
      await web.close();
    }
    // closed: no timer of the server left on the clock
    expect(clock.pending).toBe(0);
  });
});
