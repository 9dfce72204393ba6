"""The embedding models: the bundled static model and the deep tier's multilingual transformer."""
