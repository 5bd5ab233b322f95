"""The HTTP face: endpoint declarations, bearer tokens, body limits, the OpenAPI
document, operations endpoints, telemetry, logging and the application that mounts
every stage's routes."""
