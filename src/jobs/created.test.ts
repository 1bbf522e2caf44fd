import { CreatedJobs } from './created.js';

describe('CreatedJobs', () => {
  it('knows the Jobs it recorded, per StatefulSet', () => {
    const r = new CreatedJobs();
    r.add('sts-a', 'job-1');
    expect(r.of('sts-a')).toEqual(new Set(['job-1']));
    expect(r.of('sts-b')).toEqual(new Set());
  });
  it('forgets a Job a later list no longer holds, but not one created after the list was asked for', () => {
    const r = new CreatedJobs();
    r.add('sts', 'gone');
    r.add('sts', 'listed');
    const mark = r.mark();
    r.add('sts', 'racing');
    r.keep('sts', ['listed'], mark);
    expect(r.of('sts')).toEqual(new Set(['listed', 'racing']));
  });
  it('drops a StatefulSet with no Jobs left', () => {
    const r = new CreatedJobs();
    r.add('sts', 'j');
    r.keep('sts', [], r.mark());
    expect(r.of('sts')).toEqual(new Set());
    expect((r as unknown as { byOwner: Map<string, unknown> }).byOwner.size).toBe(0);
  });
});
