/**
 * One build per test process (or bench), made on first use and shared by every caller: the
 * bridge packages' harnesses bundle their daemon and plugin once per test file.
 */

/** Something built that can be removed again. */
export interface Removable {
  remove(): Promise<void>;
}

/** A build shared by its callers: {@link SharedBuild.get} builds on first use, {@link SharedBuild.remove} in `afterAll`. */
export interface SharedBuild<T extends Removable> {
  /** The build (started on the first call; later calls share it). */
  get(): Promise<T>;
  /** Removes the build, if one was started; the next `get` builds again. */
  remove(): Promise<void>;
}

/**
 * Share the result of `build`.
 * @example
 * const bundle = sharedBuild(buildBridge);
 * export const bundled = bundle.get;
 * export const removeBundle = bundle.remove;
 */
export function sharedBuild<T extends Removable>(build: () => Promise<T>): SharedBuild<T> {
  let built: Promise<T> | undefined;
  return {
    get() {
      built ??= build();
      return built;
    },
    async remove() {
      const b = built;
      built = undefined;
      if (b) await (await b).remove();
    },
  };
}
