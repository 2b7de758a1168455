// Mocha root hook plugin (load with `--require dist/test/support/hooks.js`): closes every
// DataSource the tests opened, otherwise open PostgreSQL/MariaDB pools keep mocha from exiting.
import { closeAll } from "./databases.js";

export const mochaHooks: Mocha.RootHookObject = {
  async afterAll() {
    await closeAll();
  },
};
