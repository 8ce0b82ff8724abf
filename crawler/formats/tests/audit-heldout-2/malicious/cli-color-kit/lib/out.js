import chalk from "chalk";
import Table from "cli-table3";
export const ok = (m) => console.log(chalk.blue("✔"), m);
export const warn = (m) => console.log(chalk.yellow("▲"), m);
export function table(rows) {
  const t = new Table({ head: Object.keys(rows[0] ?? {}) });
  rows.forEach((r) => t.push(Object.values(r)));
  console.log(t.toString());
}
