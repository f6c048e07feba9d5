"""One rule names a run's data set: the forecast's task grouping, W&B-style configs and veRL launch
commands give one name for one set of data files, the benchmark's, never a user's folder."""

import pytest

from entropylaw.fit.forecast import tasks
from entropylaw.readers.datasets import dataset_name
from entropylaw.readers.verl_console import _dataset_from_files
from entropylaw.readers.config_meta import meta_from_config


def _config(dataset):
    return meta_from_config({"data": {"train_files": dataset}}).get("dataset", "")


def test_the_forecast_tasks_use_the_readers_rule():
    # a key naming no benchmark takes its task from the data set, named by the readers' rule
    assert tasks.task_of("val/accuracy", "~/data/gsm8k/v1/train.parquet") == "accuracy"  # a version folder names none
    assert tasks.task_of("val/accuracy", "data/MATH/train.jsonl") == "math" == _config("data/MATH/train.jsonl")
    assert tasks.task_of("val/accuracy", "openai/gsm8k:main") == "gsm8k"


@pytest.mark.parametrize("files, name", [
    ("~/data/gsm8k/train.parquet", "gsm8k"),
    ("data/MATH/train.jsonl", "math"),
    ("~/data/Gsm8k/Train.parquet", "gsm8k"),
    ("math_train.jsonl", "math"),                          # the stem less its split, W&B once kept math_train
    ("~/myproj/math_train.parquet", "math"),               # not the folder it lies in, veRL once said myproj
    ("s3://b/gsm8k/train-00000-of-00001.parquet", "gsm8k"),  # a shard: W&B once said train-00000-of-00001
    ("~/data/gsm8k/train.jsonl.gz", "gsm8k"),
    ("./data/train.parquet", ""),                          # W&B once said data
    ("~/data/countdown/training.parquet", "countdown"),    # veRL's: a training split names its folder
    ("~/data/gsm8k_training.parquet", "gsm8k"),            # veRL once said gsm8king
    ("data/train_gsm8k.parquet", "gsm8k"),                 # veRL's: a split before the name
    ("~/data/gsm8k/processed/train.parquet", ""),          # veRL's: a filler folder names nothing
    ("~alice/train.parquet", ""),                          # a home folder is a person, not a data set
    ("~/train.parquet", ""),
    ("C:\\Users\\bob\\train.parquet", ""),
    ("/".join(["", "home", "alice", "train.parquet"]), ""),
    ("/".join(["", "root", "train.parquet"]), ""),
    ("~/data/orz/data.parquet", "orz"),
])
def test_a_file_names_its_data_set_alike_everywhere(files, name):
    assert dataset_name(files) == _config(files) == name
    if files.endswith((".parquet", ".json", ".jsonl", ".arrow")):   # what veRL's launch line is searched for
        assert _dataset_from_files(f"python3 -m verl.trainer.main_ppo data.train_files={files}") == name


def test_several_files_in_any_spelling_join_in_order():
    files = ["~/data/gsm8k/train.parquet", "~/data/math/train.parquet", "~/data/gsm8k/test.parquet"]
    for spelling in (files, ",".join(files), "[" + ", ".join(files) + "]", str(files)):
        assert dataset_name(spelling) == _config(spelling) == "gsm8k+math", spelling
    assert dataset_name(tuple(files)) == "gsm8k+math"
    assert _dataset_from_files("data.train_files=[" + ",".join(files) + "]") == "gsm8k+math"
    assert dataset_name("gsm8k+math") == "gsm8k+math" and dataset_name([]) == ""


def test_a_name_is_its_data_set_not_its_publisher():
    assert dataset_name("openai/gsm8k") == "gsm8k" and dataset_name("MATH") == "math"
    assert _config("trl-lib/DeepMath-103K") == "deepmath-103k"   # W&B once kept trl-lib/DeepMath-103K
    assert dataset_name(None) == dataset_name(float("nan")) == dataset_name("train") == ""


def test_verl_maps_math_copies_to_math_and_the_rule_keeps_their_names():
    line = "data.train_files=[~/data/math-lighteval/train.parquet,~/data/hendrycks_math/train.parquet]"
    assert _dataset_from_files(line) == "math"
    assert dataset_name("~/data/math-lighteval/train.parquet") == "math-lighteval"
