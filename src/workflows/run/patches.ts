/**
 * Every change to the run workflow that alters the commands it issues, named once. Runs left
 * open by an earlier release replay their history with the behaviour they started with
 * (`patched()` is false while replaying events recorded before the change) and take the new
 * behaviour from their first new workflow task on. A patch is deprecated (`deprecatePatch`)
 * only once no open run can hold a history from before it, and removed one release after that.
 * `test/histories/` replays every release's histories against this code to keep that true.
 */
export const PATCHES = {
  /**
   * 2026-11-30 (after 3477167): a speculative step taken on a chain the journal does not have
   * yet is deferred only while the call whose step it follows (`SpeculativeStep.after`) is
   * unfinished or deferred; otherwise its call is fed at once. Before, it was deferred for as
   * long as its chain might come, and stalled the run forever when it never came (another worker
   * ran the workflow task). The id keeps its first wording ("held"): it is stored in histories.
   */
  deferredStepsWaitOnlyForCallsInFlight: "rewind-held-steps-wait-only-for-calls-in-flight",
  /**
   * 2026-11-30 (after 3477167): a child run that is cancelled, terminated or times out ends its
   * parent's `result()` with ToolError(childFailed) carrying the child's status; a child's
   * failure is childFailed too (it was toolFailed).
   */
  childEndsParentWait: "rewind-child-ends-parent-wait",
  /**
   * 2026-11-30 (after 3477167): every end of a run goes one way (RunEnding): a cancelled run
   * sets its status, emits run.cancelled, tells its parent and cancels the children it awaits;
   * a stuck run flushes its observations and reports its span like the others.
   */
  oneWayToEnd: "rewind-one-way-to-end",
  /**
   * 2026-11-30 (after 3477167): a batch fed through a local activity is noted in the journal
   * with the time the sandbox echoes (recorded in the step's marker), after the step returns,
   * and no speculative step is adopted while it runs; the script's start time likewise. Before,
   * the journal hashed the workflow clock of the activation, which a replay after a timed-out
   * workflow task can see differently: the chains then differed and the replay took another path.
   */
  batchTimesRecorded: "rewind-batch-times-recorded",
  /**
   * 2026-11-30 (after 3ec3e0c): a run that ends or continues as new waits for the signals still
   * carrying shapes new to it to the toolset's record (`Observations.flush`). Before, a shape first
   * seen by the step a run ended on was signalled in the workflow task that closed the run, and
   * Temporal drops a signal whose sender has closed: the shape was never observed. A run that
   * continues as new flushes once no call is being sent (it flushed first, and lost what calls
   * still being sent reported).
   */
  observationsSentBeforeEnd: "rewind-observations-sent-before-end",
  /**
   * 2026-11-30 (after 0e12c49): a call parked on a 401/403 that was sent with no credentials at
   * all (no scope had any for its server) resumes when any scope's credentials are written.
   * Before, it resumed only on a write of the scope it used — none — so only `resume` woke it.
   */
  unscopedParksWakeOnWrites: "rewind-unscoped-parks-wake-on-writes",
  /**
   * 2026-11-30 (after aab30ae): `RewindStatus` is right after every end. An ended run stays ended:
   * a call parked or released after the end was set (it was still in flight when the script
   * returned) no longer upserts parked or running over it. A run that fails on an error of its own
   * (the sandbox refuses a cold start, a step's local activity fails past its retries) is announced
   * like a script failure (status failed, span, run.failed, its parent told); before, it failed
   * with its status left at running or parked.
   */
  statusAfterEveryEnd: "rewind-status-after-every-end",
  /**
   * 2026-11-30 (after aab30ae): a child run (`workflows.<name>.start`) is started with the static
   * summary, details and memo the API gives runs it starts, and the `RewindStartedAt` search
   * attribute. They are part of the StartChildWorkflowExecution command; runs that started a child
   * before replay it as they started it.
   */
  childRunsDescribed: "rewind-child-runs-described",
  /**
   * 2026-11-30 (after 239c5f3): a new run asks for every patch before its first command
   * (`announcePatches`), so its markers are recorded first in its first workflow task. Always
   * last but for those added after it: entries are only ever appended, never reordered, since a
   * run replays its announcement in this order.
   */
  patchesAnnouncedFirst: "rewind-patches-announced-first",
  /**
   * 2026-11-30 (after 3963608): a run that fails on an error of its own (`broken`) fails with
   * the ApplicationFailure type RunBroken, the error it met as its cause, and says so in
   * run.failed; before, it failed with that error itself (an ActivityFailure, or an
   * ApplicationFailure typed Error) and run.failed carried its type.
   */
  typedRunFailures: "rewind-typed-run-failures",
  /**
   * 2026-11-30 (after ea3e6ee): MCP calls are scheduled on the task queue of the worker that took
   * the run's last step (`StepPlace.sessionQueue`), where the run's isolate is warm, with a 5 s
   * schedule-to-start timeout after which the call goes to the shared queue. Before, they went to
   * the shared queue, and with several workers a result reaching history from a worker without
   * the isolate discarded the speculative steps of the one with it: that isolate then replayed
   * the whole journal cold. Asked once as the run starts: runs that started before it keep the
   * shared queue to their end.
   *
   * 2026-12-02: no longer followed. Measured on and off side by side, session queues saved
   * nothing (two workers, 16 calls at once: 1.33× plain Temporal without them, 1.40× with), so
   * workers poll no queue of their own and every call goes to the shared queue again. Which queue
   * a call is scheduled on is not part of Temporal's determinism check, so runs that followed
   * their session replay unchanged; a call such a run left on a session queue is sent again on
   * the shared queue when no worker takes it (legacy/session-queue-calls.ts). The entry stays:
   * its place in this list is part of every baseline.
   */
  callsFollowTheirSession: "rewind-calls-follow-their-session",
  /**
   * 2026-11-30 (after 92c803b): a new run records this one marker instead of one for each change
   * declared above it, and follows them all (`isPatched` in run-patches.ts). Each patch marker is
   * followed by core's upsert of `TemporalChangeVersion`: 26 events and 13 visibility writes of a
   * run's first workflow task, against 2 now. Changes declared below it are announced one by one.
   */
  releaseBaseline: "rewind-release-baseline-2026-11-30",
  /**
   * 2026-11-30 (after 1ba07ea): the result shapes a run observes reach its toolset's record
   * through a worker sink, which the worker passes on as a signal, instead of a signal the run
   * sends itself. Each signal a run sent cost it a workflow task when Temporal confirmed it (one
   * at the first result of each tool without an output schema), and a run waited for the last
   * ones before it could end. Best effort either way; a sink is not called again on replay.
   * Asked once as the run starts.
   */
  observationsBySink: "rewind-observations-by-sink",
  /**
   * 2026-11-30: a new run records this one marker for every change above it, the first baseline
   * and those after it included (`isPatched` in run-patches.ts), so a change costs new runs no
   * marker and no `TemporalChangeVersion` upsert of its own.
   */
  releaseBaseline2: "rewind-release-baseline-2026-11-30-b",
  /**
   * 2026-11-30 (after 7ad6a88): a run whose input carries its first step (`RunInput.firstStep`,
   * taken by the worker beside the API that started it) adopts that step instead of taking it in
   * a local activity, so its first workflow task schedules its first calls at once. Only runs
   * started on this release can carry one.
   */
  firstStepCarried: "rewind-first-step-carried",
  /** 2026-11-30: a new run records this one marker for every change above it (see `releaseBaseline2`). */
  releaseBaseline3: "rewind-release-baseline-2026-11-30-c",
  /**
   * The baseline runs started on c3c2ddd recorded: that commit added a change after
   * `releaseBaseline3` (an MCP call's result reached the run loop with fewer promises between,
   * the same commands) and this baseline, and 24ec275 took the change back out. Those runs
   * follow everything `releaseBaseline3` covers and go on on today's call path; nothing new
   * records it.
   */
  releaseBaselineOfC3c2ddd: "rewind-release-baseline-2026-11-30-d",
  /**
   * 2026-12-01 (after ebc6445): a call parked on stored credentials tells the toolset's
   * credentials workflow (and its base's) which revision it was refused with, in a local
   * activity, and that workflow wakes the run on the next write to the scope, or at once if one
   * was made since. Before, only the API's listing of parked runs woke it, and a run not yet listed
   * (visibility lags) or parked after the write's listing stayed parked. A renewal now resumes a
   * call only when its revision is newer than the one the call was refused with, so a run told of
   * one write twice (by the listing and by the credentials workflow) sends its call once.
   */
  credentialWaits: "rewind-credential-waits",
  /** 2026-12-01: a new run records this one marker for every change above it (see `releaseBaseline2`). */
  releaseBaseline4: "rewind-release-baseline-2026-12-01",
  /**
   * 2026-12-06: a sandbox step a worker refuses for lacking the run's runtime (RuntimeVersionError)
   * fails the workflow task, so another worker takes it. Before, the check looked for the refusal
   * inside an ActivityFailure, but a local activity's failure reaches the workflow as the
   * ApplicationFailure itself: the run failed RunBroken. Runs recorded before replay that end.
   */
  runtimeRefusalFailsTheTask: "rewind-runtime-refusal-fails-the-task",
  /** 2026-12-06: a new run records this one marker for every change above it (see `releaseBaseline2`). */
  releaseBaseline5: "rewind-release-baseline-2026-12-06",
} as const;
