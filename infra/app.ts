import { App } from "aws-cdk-lib";
import { ContextError } from "./config.ts";
import { addPlantStore } from "./plant-store-app.ts";

const app = new App();
try {
  addPlantStore(app);
} catch (error) {
  // A refused context option is the user's to fix: its message, without a stack trace into our code.
  if (!(error instanceof ContextError)) throw error;
  console.error(`Error: ${error.message}`);
  process.exit(1);
}
app.synth();
