"""The HTTP face: endpoint declarations, each stage's endpoints (thin handlers over
the stage's own functions), bearer tokens, body limits, the OpenAPI document,
operations endpoints, telemetry, logging and the application that mounts them."""
