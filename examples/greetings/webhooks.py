"""The Greeting's admission webhooks (docs/tutorial.md, "Webhooks"): a defaulter that fills in
a missing message, a validator that refuses a blank one and warns about shouting."""

from typing import Any

from kube_runtime import Manager, webhook

from .models import Greeting


def default_greeting(greeting: dict[str, Any], request: webhook.AdmissionRequest) -> None:
    greeting.setdefault("spec", {}).setdefault("message", "hello")  # before schema validation


class GreetingValidator(webhook.Validator):
    def validate_create(self, greeting: dict[str, Any], request: webhook.AdmissionRequest) -> None:
        message = greeting["spec"]["message"]
        if not message.strip():
            raise webhook.Invalid("spec.message", "must not be blank", value=message)
        if message.isupper():
            request.warn("spec.message: no need to shout")

    def validate_update(
        self, old: dict[str, Any], new: dict[str, Any], request: webhook.AdmissionRequest
    ) -> None:
        if new.get("spec") != old.get("spec"):  # metadata-only updates (a finalizer) pass
            self.validate_create(new, request)


def setup_webhooks(manager: Manager, **server: Any) -> webhook.Server:
    served = webhook.server_for(manager, **server)
    resource = Greeting.__kube_resource__
    webhook.for_kind(manager, resource.api_version + "/Greeting", resource=resource).defaulter(
        default_greeting
    ).validator(GreetingValidator())
    return served
