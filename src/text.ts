// Text from outside (a gate's answer, a status message) on its way to a terminal, an Event or a page.

// C0 controls (but tab and newline, folded elsewhere), DEL and C1 controls: ESC starts terminal escape
// sequences, and 0x9b is a one-byte CSI on terminals that honour C1. A health endpoint's body or a
// forged status could otherwise rewrite what `kubectl phased-rollout status` shows on a terminal.
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** stripControls removes control characters that a terminal would act on. */
export function stripControls(s: string): string {
  return s.replace(CONTROLS, '');
}
