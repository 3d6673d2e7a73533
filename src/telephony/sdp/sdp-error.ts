/**
 * Why a session description was refused, with the SIP status to refuse it with: 400 when the
 * text is not a well-formed (or not a reasonably sized) session description, 488 (Not Acceptable
 * Here) when it is well-formed but asks for media we cannot take part in.
 */
export class SdpError extends Error {
  override name = 'SdpError';
  constructor(
    /** The SIP response status to answer the offer with. */
    readonly status: 488 | 400,
    /** What exactly is wrong, for a Warning header and the log; names the offending line or value. */
    readonly detail: string,
  ) {
    super(`${status === 400 ? 'malformed session description' : 'session description not acceptable'}: ${detail}`);
  }
}
