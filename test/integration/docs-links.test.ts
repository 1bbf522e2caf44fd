// Every relative link of the README and docs/ resolves: the file exists and, with a #fragment, the
// target has a heading of that anchor (GitHub's slugs). The README is a front door, and a link that
// leads nowhere is a lie in it.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..', '..');

/** slug is GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to dashes. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/[^\p{L}\p{N} -]/gu, '')
    .replace(/ /g, '-');
}

/** linksOf lists the relative links of a Markdown text, outside code blocks. */
function linksOf(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] ?? '').filter((l) => !/^[a-z]+:/i.test(l));
}

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1] ?? '')));
}

const pages = [join(ROOT, 'README.md'), ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join(ROOT, 'docs', f))];

describe('links in the README and docs/', () => {
  it('slug follows GitHub', () => {
    expect(slug('Per-pod gates, groups and notifications')).toBe('per-pod-gates-groups-and-notifications');
    expect(slug('§4 additions: the controller')).toBe('4-additions-the-controller');
    expect(slug('`npm run demo`')).toBe('npm-run-demo');
  });

  it('every relative link resolves to a file, and every #anchor to a heading', () => {
    const broken: string[] = [];
    for (const page of pages) {
      for (const link of linksOf(readFileSync(page, 'utf8'))) {
        const [path = '', anchor] = link.split('#');
        const target = path === '' ? page : resolve(dirname(page), decodeURIComponent(path));
        if (!existsSync(target)) broken.push(`${relative(ROOT, page)}: ${link} (no such file)`);
        else if (anchor && target.endsWith('.md') && !anchorsOf(target).has(anchor)) broken.push(`${relative(ROOT, page)}: ${link} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('the README stays a front door: at most 250 lines, every docs/ page linked from it', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(250);
    const linked = new Set(linksOf(readme).map((l) => l.split('#')[0]));
    const unlinked = pages.filter((p) => p.includes(`${join(ROOT, 'docs')}/`)).map((p) => relative(ROOT, p)).filter((p) => !linked.has(p));
    expect(unlinked).toEqual([]);
  });
});
