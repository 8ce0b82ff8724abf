import { defineConfig } from "@playwright/test";
export default defineConfig({ expect: { toHaveScreenshot: { maxDiffPixelRatio: 0.01 } } });
