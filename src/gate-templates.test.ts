import { escapeLiteral, placeholderProblem, renderQuery, renderUrl, urlProblem } from './gate-templates.js';

const CTX = { namespace: 'prod', statefulset: 'db', pod: 'db-4', ordinal: '4', revision: 'db-7d9f' };

describe('placeholderProblem', () => {
  it.each([
    ['up', undefined],
    ['up{pod="{{pod}}"} == 1', undefined],
    ["up{pod='{{ pod }}', namespace=\"{{namespace}}\"}", undefined],
    ['kube_pod_labels{label_controller_revision_hash="{{revision}}"}', undefined],
    ['up{pod=~"{{statefulset}}-{{ordinal}}"}', undefined],
    ['up{pod="a\\"{{pod}}"}', undefined], // an escaped quote does not end the literal
    ['up{pod={{pod}}}', 'must stand inside a "..." label value'],
    ['up{pod=`{{pod}}`}', 'must stand inside a "..." label value'],
    ['up{pod="x"} # {{pod}}', 'must stand inside'], // a comment is no literal
    ['up{pod="{{node}}"}', 'unknown placeholder {{node}}'],
    ['up{pod="{{Pod}}"}', 'unknown placeholder {{Pod}}'],
  ])('%s', (q, problem) => {
    const p = placeholderProblem(q);
    if (problem === undefined) expect(p).toBeUndefined();
    else expect(p).toContain(problem);
  });
});

describe('renderQuery', () => {
  it.each([
    ['up{pod="{{pod}}"} == 1', 'up{pod="db-4"} == 1'],
    ['up{pod="{{ pod }}", ns="{{namespace}}"}', 'up{pod="db-4", ns="prod"}'],
    ["x{r='{{revision}}'}", "x{r='db-7d9f'}"],
    ['x{a="{{statefulset}}-{{ordinal}}"} and on() y{b="{{pod}}"}', 'x{a="db-4"} and on() y{b="db-4"}'],
    ['no placeholders', 'no placeholders'],
  ])('%s', (q, want) => expect(renderQuery(q, CTX)).toBe(want));

  it('escapes every value for its literal: a name can never close the string and add PromQL', () => {
    const evil = { ...CTX, pod: 'x"} or vector(1) #', namespace: "a'\\b\nc" };
    expect(renderQuery('up{pod="{{pod}}"} == 1', evil)).toBe('up{pod="x\\"} or vector(1) #"} == 1');
    expect(renderQuery("up{ns='{{namespace}}'}", evil)).toBe("up{ns='a\\'\\\\b\\nc'}");
    // The other quote needs no escape inside a literal.
    expect(escapeLiteral(`it's "x"`, "'")).toBe(`it\\'s "x"`);
  });
});

describe('HTTP gate URLs', () => {
  it.each([
    ['http://consul.local:8500/v1/agent/health/service/name/{{statefulset}}', undefined],
    ['https://db.ns.svc:8443/healthz?pod={{pod}}&rev={{revision}}', undefined],
    ['http://127.0.0.1:9000/', undefined],
    ['ftp://host/x', 'an http:// or https:// URL'],
    ['http://user:pw@host/x', 'no credentials in the URL'],
    ['http://host/x#frag', 'no #fragment'],
    ['http://{{pod}}.svc/healthz', 'placeholders may stand only in the path or query, after the host'],
    ['http://host:{{ordinal}}/x', 'placeholders may stand only in the path or query, after the host'],
    // One slash after the scheme: the URL parser still reads a host there (security review item 10).
    ['http:/{{statefulset}}.evil/x', 'placeholders may stand only in the path or query, after the host'],
    ['https:{{pod}}.evil/x', 'placeholders may stand only in the path or query, after the host'],
    ['http://u{{pod}}@host/x', 'placeholders may stand only in the path or query, after the host'],
    ['http://host', undefined],
    ['http://host/{{node}}', 'unknown placeholder {{node}}'],
    ['not a url', 'a URL such as'],
    [`http://host/${'x'.repeat(2048)}`, 'at most 2048 characters'],
  ])('%s', (url, want) => {
    const p = urlProblem(url);
    if (want === undefined) expect(p).toBeUndefined();
    else expect(p).toContain(want);
  });

  it('renders each placeholder as one percent-encoded URL component', () => {
    const ctx = { namespace: 'ns', statefulset: 'db', pod: 'db-2', ordinal: '2', revision: 'db-5d/../x?y#z' };
    expect(renderUrl('http://h/v1/{{statefulset}}/{{pod}}?rev={{revision}}', ctx)).toBe('http://h/v1/db/db-2?rev=db-5d%2F..%2Fx%3Fy%23z');
  });
});
