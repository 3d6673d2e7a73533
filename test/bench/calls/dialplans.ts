/** The dialplans of the call benchmark: synthetic engines for load and barge-in, live engines for turns. */

/** A prompt of about 9 s (the synthetic engine speaks 15 characters a second), looped by the load route. */
const LOAD_PROMPT =
  'Thank you for calling. All of our agents are busy at the moment. Please stay on the line, your call is important to us and will be answered shortly.';
/** A prompt far longer than a barge-in round. */
const LONG_PROMPT = `${LOAD_PROMPT} ${LOAD_PROMPT} ${LOAD_PROMPT}`;

/** Route `load` loops a prompt without barge-in (ten times, then half a second of listening for keys); route `barge` plays a long prompt that speech stops. */
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
          repeat: 10
          pause_ms: 0
      # A loop must wait for the caller somewhere (the loader refuses one that never does).
      - listen: { speech: false, timeout_ms: 500 }
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

/**
 * Route `menu` (eSpeak NG): a menu whose keys lead to a short reply, then back to the menu; and
 * route `load`, the synthetic prompt loop, for the calls that talk meanwhile.
 */
export const MENU_DIALPLAN = `name: calls-bench-menu
routes:
  - number: "menu"
    engines: live
    language: en
    voice: jonas
    max_turns: 1000
    steps:
      - answer: {}
      - id: menu
        menu:
          prompt: For sales press 1, for support press 2.
          options:
            - { key: "1", goto: sales }
            - { key: "2", goto: support }
          timeout_ms: 20000
      - id: sales
        say: { text: You chose sales. }
      - goto: menu
      - id: support
        say: { text: You chose support. }
      - goto: menu
${SYNTHETIC_DIALPLAN.split('\n').slice(2).join('\n')}`;
