// The schema an unrestricted caller gets for the test domain's customers (every operator of each
// field's DataType, every feature), for the AG Grid, MUI and Refine round trips.
import { DataType } from "../../../lib/client/index.js";
import { operatorsOf } from "../../../lib/shapes/operator-table.js";
import type { GridSchema, GridSchemaField } from "../../../lib/client/grids/core.js";

const field = (path: string, dataType: DataType, extra: Partial<GridSchemaField> = {}): GridSchemaField => ({
  path, label: path, dataType, operators: [...operatorsOf[dataType]], allowedValues: null, features: ["Where", "Select", "Order", "Group", "Aggregate", "Segment"], transforms: [], ...extra,
});

export const customerSchema: GridSchema = {
  entity: "customers",
  fields: [
    field("id", DataType.Number), field("name", DataType.Text), field("tier", DataType.Enum, { allowedValues: ["Bronze", "Silver", "Gold"] }),
    field("isActive", DataType.Boolean), field("score", DataType.Number), field("balance", DataType.Number), field("createdAt", DataType.DateTime),
    field("birthDate", DataType.Date), field("notes", DataType.Text), field("address.city", DataType.Text),
  ],
};
