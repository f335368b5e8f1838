"""jobs: the built-in training jobs run by spark-submit, each described by a TOML file beside it: BigDL's
LeNet-5 and bidirectional RNN (``lenet``, ``birnn``), Spark MLlib's perceptron (``mlp``), LeNet-5 in PyTorch
through TorchDistributor (``torch-lenet``) and XGBoost's Spark estimator (``xgboost``), all on MNIST."""
