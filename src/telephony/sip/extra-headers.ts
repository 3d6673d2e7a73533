/**
 * Headers that the application adds to a request of ours (Diversion, X-…, User-to-User on an
 * outbound INVITE or a REFER). Their values come from dialplans, filled with what callers
 * typed or said, so a line break is refused (it would start a header of the caller's choosing),
 * and so is any header the stack writes itself, which a second copy would contradict.
 */

/** A header name (RFC 3261 token). */
const TOKEN = /^[A-Za-z0-9\-.!%*_+`'~]+$/;

/** Headers the stack writes in every request it sends: never taken from the application. */
const STACK_HEADERS = new Set([
  'via',
  'v',
  'from',
  'f',
  'to',
  't',
  'call-id',
  'i',
  'cseq',
  'max-forwards',
  'contact',
  'm',
  'content-length',
  'l',
  'content-type',
  'c',
  'route',
  'record-route',
]);

/**
 * The extra headers of a request, checked; `also` names further headers the request writes
 * itself (`Refer-To` for a REFER).
 * @throws RangeError naming the first header that is malformed, has a line break, or is one
 *   the stack writes
 */
export function checkedExtraHeaders(
  headers: ReadonlyArray<readonly [string, string]> = [],
  also: readonly string[] = [],
): ReadonlyArray<readonly [string, string]> {
  const reserved = new Set([...STACK_HEADERS, ...also.map((name) => name.toLowerCase())]);
  for (const [name, value] of headers) {
    if (!TOKEN.test(name)) throw new RangeError(`${JSON.stringify(name)} is not a header name`);
    if (reserved.has(name.toLowerCase())) throw new RangeError(`the ${name} header is written by the SIP stack and cannot be set`);
    if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(value)) throw new RangeError(`the ${name} header's value has a line break or control character`);
  }
  return headers;
}
