from imgcls.models.resnet import build_model

__all__ = ["build_model"]
