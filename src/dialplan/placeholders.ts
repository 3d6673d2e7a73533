/**
 * `{{name}}` placeholders of prompts, `set` values and transfer targets, filled from a call's
 * variables; inside `<speak>` markup the values are escaped, so a caller's words cannot become
 * markup.
 */
export function fillPlaceholders(text: string, vars: Readonly<Record<string, string>>): string {
  const markup = text.trimStart().startsWith('<');
  return text.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, name: string) => {
    const value = vars[name] ?? '';
    return markup ? value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;') : value;
  });
}
