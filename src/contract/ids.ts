/** The shape of ids on the wire: a toolset id is `ts_` and the SHA-256 of its pinned document. */
export const TOOLSET_ID_PATTERN = /^ts_[0-9a-f]{64}$/;
