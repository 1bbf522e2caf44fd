// Two projects: `unit` (pure tables plus in-process servers on 127.0.0.1: supertest, real TLS) runs on
// `npm test`; `e2e` runs against the real control plane of hack/e2e-up.sh (`npm run test:e2e`).
const common = {
  preset: 'ts-jest/presets/default-esm',
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }] },
  modulePathIgnorePatterns: ['<rootDir>/dist/', '<rootDir>/.e2e/', '<rootDir>/.demo/'],
};

export default {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/{src,webhook,controller,certs,plugin,demo,bench,scenarios}/**/*.test.ts', '<rootDir>/test/integration/**/*.test.ts'] },
    { ...common, displayName: 'e2e', testMatch: ['<rootDir>/test/e2e/**/*.test.ts'] },
  ],
};
