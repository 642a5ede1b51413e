import { App } from "aws-cdk-lib";
import { addPlantStore } from "./plant-store-app.ts";

const app = new App();
addPlantStore(app);
app.synth();
