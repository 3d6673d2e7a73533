/** The dialplans of the call benchmark: synthetic engines for load and barge-in, live engines for turns. */

/** A prompt of about 9 s (the synthetic engine speaks 15 characters a second), looped by the load route. */
const LOAD_PROMPT =
  'Thank you for calling. All of our agents are busy at the moment. Please stay on the line, your call is important to us and will be answered shortly.';
/** A prompt far longer than a barge-in round. */
const LONG_PROMPT = `${LOAD_PROMPT} ${LOAD_PROMPT} ${LOAD_PROMPT}`;

/** Route `load` loops a prompt without barge-in; route `barge` plays a long prompt that speech stops. */
export const SYNTHETIC_DIALPLAN = `name: calls-bench
routes:
  - number: "load"
    engines: synthetic
    language: en
    voice: jonas
    max_turns: 1000
    steps:
      - answer: {}
      - id: prompt
        say:
          text: ${JSON.stringify(LOAD_PROMPT)}
          barge_in: false
      - goto: prompt
  - number: "barge"
    engines: synthetic
    language: en
    voice: jonas
    steps:
      - answer: {}
      - say:
          text: ${JSON.stringify(LONG_PROMPT)}
      - hangup: {}
`;

/** Route `turn`: a greeting, one listen (with `endSilenceMs`, or the listen default), the reply, hang-up (eSpeak NG and pocketsphinx). */
export const liveDialplan = (endSilenceMs: number | null): string => `name: calls-bench-live
routes:
  - number: "turn"
    engines: live
    language: en
    voice: jonas
    steps:
      - answer: {}
      - say:
          text: Hello.
          barge_in: false
      - listen:
          dtmf: false
          timeout_ms: 8000
          max_ms: 15000${
            endSilenceMs === null
              ? ''
              : `
          end_silence_ms: ${endSilenceMs}`
          }
      - say:
          text: "You said {{heard}}."
          barge_in: false
      - hangup: {}
`;
