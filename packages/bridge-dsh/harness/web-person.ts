/**
 * A person at DSH's own web UI, for tests: the browser's wire — `/api/<method>` unary calls
 * (`@deepseek-ai/dsh-host-apiproxy` envelopes) and the `/api/events.mux` event stream, a
 * WebSocket whose messages are `{ type: 'server-request', rpcId, method, payload }` — over
 * Node's own fetch and WebSocket. Enough to open a session, prompt it and see or answer an
 * approval prompt.
 */
import { randomUUID } from 'node:crypto';
import type { ManagedProcess } from '@agentmail/testkit';

/** One frame of the mux stream. */
export interface MuxFrame {
  rpcId: string;
  payload: { type: string; sessionId?: string; [key: string]: unknown };
}

/** The `http://127.0.0.1:<port>` `dsh web` printed (`dsh web: <url>`). */
export function webUrl(proc: ManagedProcess): string {
  for (const line of proc.lines()) {
    const url = /dsh web: (http:\/\/[^\s/]+)/.exec(line)?.[1];
    if (url !== undefined) return url;
  }
  throw new Error(`dsh printed no "dsh web:" line:\n${proc.tail()}`);
}

/** The person's browser talking to one `dsh web`. */
export class WebPerson {
  readonly frames: MuxFrame[] = [];
  readonly #base: string;
  #socket: WebSocket | undefined;
  readonly #waiters = new Set<() => void>();

  private constructor(base: string) {
    this.#base = base;
  }

  /** Opens the mux stream (resolves once the WebSocket is open). */
  static async open(base: string): Promise<WebPerson> {
    const person = new WebPerson(base);
    const socket = new WebSocket(`${base.replace(/^http/, 'ws')}/api/events.mux`);
    person.#socket = socket;
    socket.addEventListener('message', (event) => {
      const message = JSON.parse(String(event.data)) as MuxFrame;
      person.frames.push({ rpcId: message.rpcId, payload: message.payload });
      for (const w of [...person.#waiters]) w();
    });
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('open', () => resolve(), { once: true });
      socket.addEventListener(
        'error',
        () => reject(new Error(`events.mux: the WebSocket to ${base} did not open`)),
        {
          once: true,
        },
      );
    });
    return person;
  }

  /** One unary call; resolves with the result value. @throws Error with the host's error. */
  async call(method: string, payload: unknown): Promise<unknown> {
    const res = await fetch(`${this.#base}/api/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'client-request', rpcId: randomUUID(), method, payload }),
    });
    const body = (await res.json()) as { result?: { ok: boolean; value?: unknown; error?: unknown } };
    if (!res.ok || body.result?.ok !== true)
      throw new Error(`${method}: HTTP ${res.status} ${JSON.stringify(body)}`);
    return body.result.value;
  }

  /** Answers a server request of the mux stream (an approval prompt). */
  async respond(rpcId: string, value: unknown): Promise<unknown> {
    const res = await fetch(`${this.#base}/api/respond`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'client-response', rpcId, result: { ok: true, value } }),
    });
    return res.json();
  }

  /** The first frame (seen or to come) matching `match`. */
  waitFor(match: (f: MuxFrame) => boolean, timeoutMs: number): Promise<MuxFrame> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const hit = this.frames.find(match);
        if (hit === undefined) return false;
        this.#waiters.delete(onFrame);
        clearTimeout(timer);
        resolve(hit);
        return true;
      };
      const onFrame = (): void => void check();
      const timer = setTimeout(() => {
        this.#waiters.delete(onFrame);
        reject(
          new Error(
            `no matching mux frame within ${timeoutMs} ms; seen: ${this.frames.map((f) => f.payload.type).join(', ')}`,
          ),
        );
      }, timeoutMs);
      if (!check()) this.#waiters.add(onFrame);
    });
  }

  close(): void {
    this.#socket?.close();
  }
}
