import { accessLogGroupName } from "./access-log-group-name.ts";
import { alarmTopicPolicy } from "./alarm-topic-policy.ts";
import { certificateRegion } from "./certificate-region.ts";
import { cognitoDomainPrefix } from "./cognito-domain-prefix.ts";
import { corsExposeHeaders } from "./cors-expose-headers.ts";
import type { DeployRule } from "./deploy-rule.ts";
import { nameLengths } from "./name-lengths.ts";
import { rollbackAlarms } from "./rollback-alarms.ts";
import { tableRetention } from "./table-retention.ts";
import { versionsRetained } from "./versions-retained.ts";

/** Every deploy-time rule the stack must pass at synth, one file each (see ./deploy-rule.ts). */
export const DEPLOY_RULES: readonly DeployRule[] = [
  accessLogGroupName,
  alarmTopicPolicy,
  tableRetention,
  corsExposeHeaders,
  cognitoDomainPrefix,
  certificateRegion,
  nameLengths,
  rollbackAlarms,
  versionsRetained,
];
