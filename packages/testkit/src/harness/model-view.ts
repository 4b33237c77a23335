/**
 * One scripted model server shared by the stacks of one running bridge (a shared host): each stack
 * sees only the requests that carry one of its own names (its person, its peer agents: every turn
 * prompt names the sender, SPEC B-5), plus the ones no stack claims, so a journal check such as
 * "every request was scripted" covers the stack's own turns and anything nobody can account for.
 */
import { TESTKIT_ERROR_CODES, TestkitError } from '../errors.js';
import { DEFAULT_WAIT_TIMEOUT_MS, type ModelServer, type RequestFilter } from '../model-server.js';
import { contentText, type RecordedRequest, type RequestEnd } from '../request.js';
import { matchesRequest, type RequestMatch, type RequestPredicate, type Scenario } from '../scenario.js';

/** What a stack uses of the scripted model: {@link ModelServer} itself, or a {@link ModelView} of it. */
export interface ScriptedModel {
  /** Origin, e.g. `http://127.0.0.1:40123`. */
  readonly url: string;
  /** OpenAI base URL to give a host, `${url}/v1`. */
  readonly baseUrl: string;
  /** Model ids listed by `GET /v1/models`. */
  readonly models: readonly string[];
  /** Appends scenarios (tried in order, after the existing ones of the server). */
  addScenarios(scenarios: readonly Scenario[]): unknown;
  /** Recorded chat requests in arrival order, optionally filtered. */
  requests(filter?: RequestFilter): RecordedRequest[];
  /** Recorded requests no scenario answered. */
  unmatched(): RecordedRequest[];
  /** The first matching request, recorded or arriving within `timeoutMs`. */
  waitForRequest(match: RequestMatch | RequestPredicate, timeoutMs?: number): Promise<RecordedRequest>;
  /** When the response to `request` has ended. */
  waitForEnd(request: RecordedRequest, timeoutMs?: number): Promise<RequestEnd>;
}

/** Every message text of a request, joined (what its names are looked up in). */
function requestText(request: RecordedRequest): string {
  return (request.body?.messages ?? []).map((m) => contentText(m.content)).join('\n');
}

/**
 * Who owns which requests of one model server: stacks register their names
 * ({@link ModelViews.view}); a request belongs to the stack whose name it carries.
 */
export class ModelViews {
  readonly server: ModelServer;
  readonly #names = new Map<ModelView, Set<string>>();
  readonly #owner = new WeakMap<RecordedRequest, ModelView | null>();

  constructor(server: ModelServer) {
    this.server = server;
  }

  /** A new view; `names` (and those added later with {@link ModelView.claim}) mark its requests. */
  view(names: readonly string[] = []): ModelView {
    const view = new ModelView(this);
    this.#names.set(view, new Set(names));
    return view;
  }

  /** @internal */
  claim(view: ModelView, name: string): void {
    this.#names.get(view)?.add(name);
  }

  /** @internal The view whose name `request` carries; `null` when none does. */
  ownerOf(request: RecordedRequest): ModelView | null {
    // Only cached once the request is complete enough to carry its prompt (bodies never change).
    const cached = this.#owner.get(request);
    if (cached !== undefined) return cached;
    const text = requestText(request);
    let owner: ModelView | null = null;
    for (const [view, names] of this.#names)
      if ([...names].some((n) => text.includes(n))) {
        owner = view;
        break;
      }
    if (owner !== null) this.#owner.set(request, owner);
    return owner;
  }
}

/**
 * One stack's part of a shared model server: the requests carrying one of its names, plus those
 * nobody's names mark (so nothing unexplained slips through any check). Scenarios added through a
 * view go to the shared server (they match on each stack's own markers).
 */
export class ModelView implements ScriptedModel {
  readonly #views: ModelViews;

  /** @internal Made by {@link ModelViews.view}. */
  constructor(views: ModelViews) {
    this.#views = views;
  }

  get url(): string {
    return this.#views.server.url;
  }

  get baseUrl(): string {
    return this.#views.server.baseUrl;
  }

  get models(): readonly string[] {
    return this.#views.server.models;
  }

  /** Marks requests carrying `name` as this view's (e.g. a peer agent the stack created). */
  claim(name: string): void {
    this.#views.claim(this, name);
  }

  addScenarios(scenarios: readonly Scenario[]): this {
    this.#views.server.addScenarios(scenarios);
    return this;
  }

  requests(filter: RequestFilter = {}): RecordedRequest[] {
    return this.#views.server.requests(filter).filter((r) => this.#sees(r));
  }

  unmatched(): RecordedRequest[] {
    return this.#views.server.unmatched().filter((r) => this.#sees(r));
  }

  waitForRequest(
    match: RequestMatch | RequestPredicate,
    timeoutMs: number = DEFAULT_WAIT_TIMEOUT_MS,
  ): Promise<RecordedRequest> {
    const predicate: RequestPredicate =
      typeof match === 'function' ? match : (request) => matchesRequest(match, request);
    return this.#views.server.waitForRequest((r) => this.#sees(r) && predicate(r), timeoutMs);
  }

  waitForEnd(request: RecordedRequest, timeoutMs: number = DEFAULT_WAIT_TIMEOUT_MS): Promise<RequestEnd> {
    if (!this.#sees(request))
      throw new TestkitError(
        TESTKIT_ERROR_CODES.HOST_SHARED,
        `request #${request.seq} belongs to another stack on this model server; wait on one of your own.`,
      );
    return this.#views.server.waitForEnd(request, timeoutMs);
  }

  #sees(request: RecordedRequest): boolean {
    const owner = this.#views.ownerOf(request);
    return owner === this || owner === null;
  }
}
